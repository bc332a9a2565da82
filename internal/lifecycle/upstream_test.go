package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// What a request owes when its call ended without the vendor's usage, by
// who ended it (the table in streamend.go).
func TestOwed(t *testing.T) {
	gone := &apierr.Error{Status: apierr.StatusClientClosed, Code: apierr.CodeClientClosed, Err: context.Canceled}
	vendor := provider.FromStatus("p", http.StatusInternalServerError, nil, provider.VendorError{})
	broken := provider.BadResponse("p", errors.New("truncated"))
	for _, tc := range []struct {
		name         string
		sent, drains bool
		err          error
		delivered    bool
		want         Owes
	}{
		{"vendor never had it", false, false, gone, false, OwesNothing},
		{"vendor never had it, reasoning", false, true, gone, false, OwesNothing},
		{"gone before the first byte", true, false, gone, false, OwesCount},
		{"gone before the first byte, reasoning", true, true, gone, false, OwesHeld},
		{"gone after text", true, false, gone, true, OwesCount},
		{"gone after text, reasoning, bound passed", true, true, gone, true, OwesHeld},
		{"vendor error before text", true, false, vendor, false, OwesNothing},
		{"vendor error before text, reasoning", true, true, vendor, false, OwesNothing},
		{"vendor broke off after text", true, true, vendor, true, OwesCount},
		{"unreadable answer", true, false, broken, false, OwesCount},
		{"unreadable answer, reasoning", true, true, broken, false, OwesHeld},
		{"ended without usage", true, false, nil, true, OwesCount},
		{"ended without usage, reasoning", true, true, nil, true, OwesCount},
	} {
		u := &Upstream{}
		if tc.sent {
			u.sent.Mark()
		}
		if tc.drains {
			u.cancel = func(error) {}
		}
		if got := u.Owed(tc.err, tc.delivered); got != tc.want {
			t.Errorf("%s: owes %d, want %d", tc.name, got, tc.want)
		}
	}
	var none *Upstream // billing off
	if none.Owed(gone, true) != OwesCount || none.Owed(gone, false) != OwesNothing {
		t.Error("without billing: what was delivered is counted, nothing else")
	}
}
