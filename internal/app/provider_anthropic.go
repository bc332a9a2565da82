package app

import (
	"fmt"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
)

// newAnthropic builds the Anthropic Messages adapter for p.
func newAnthropic(p config.Provider, _ Options) (provider.Chatter, error) {
	return nil, fmt.Errorf("provider %s: type anthropic is not available yet", p.Name)
}
