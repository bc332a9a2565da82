package surcharge

import (
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
)

// Terms is a Plan in a form a task can store (JSON), so that a settlement
// outside the request (a background response) prices what the answer used
// as the request was admitted: at the prices of that moment, whatever the
// config says later.
type Terms struct {
	Price  billing.TokenPrice            `json:"price"`
	Tiers  map[string]billing.TokenPrice `json:"tiers,omitempty"`
	Tier   string                        `json:"tier,omitempty"`
	Items  map[string]money.Micros       `json:"items,omitempty"`
	Images []ImageTerms                  `json:"images,omitempty"`
	Fixed  money.Micros                  `json:"fixed,omitempty"`
	Search money.Micros                  `json:"search,omitempty"`
}

// ImageTerms is an image_generation tool's image prices and requested
// size and quality.
type ImageTerms struct {
	Free    bool                 `json:"free,omitempty"`
	Prices  []billing.ImagePrice `json:"prices,omitempty"`
	Size    string               `json:"size,omitempty"`
	Quality string               `json:"quality,omitempty"`
}

// Terms returns p's terms.
func (p *Plan) Terms() Terms {
	t := Terms{Price: p.mp.Price, Tiers: p.mp.Tiers, Tier: p.tier, Items: p.items, Fixed: p.fixed, Search: p.search}
	for _, it := range p.image {
		t.Images = append(t.Images, ImageTerms{Free: it.price.Free, Prices: it.price.Images, Size: it.size, Quality: it.quality})
	}
	return t
}

// Marshal is p's terms in JSON.
func (p *Plan) Marshal() (string, error) {
	b, err := json.Marshal(p.Terms())
	if err != nil {
		return "", fmt.Errorf("surcharge: marshal terms: %w", err)
	}
	return string(b), nil
}

// Plan is the plan t was made from, ready to Settle (its Price, Fees and
// Calls, which only admission needs, are not restored).
func (t Terms) Plan() *Plan {
	p := &Plan{mp: billing.ModelPrice{Price: t.Price, Tiers: t.Tiers}, tier: t.Tier, items: t.Items, fixed: t.Fixed, search: t.Search}
	for _, it := range t.Images {
		p.image = append(p.image, imageTool{price: billing.ModelPrice{Free: it.Free, Images: it.Prices}, size: it.Size, quality: it.Quality})
	}
	return p
}

// Unmarshal reads terms Marshal wrote.
func Unmarshal(s string) (*Plan, error) {
	var t Terms
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, fmt.Errorf("surcharge: read terms: %w", err)
	}
	return t.Plan(), nil
}
