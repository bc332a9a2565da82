package app

import (
	"fmt"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
)

// newGemini builds the Gemini adapter for p.
func newGemini(p config.Provider, _ Options) (provider.Chatter, error) {
	return nil, fmt.Errorf("provider %s: type gemini is not available yet", p.Name)
}
