package openai

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
		want         owes
	}{
		{"vendor never had it", false, false, gone, false, owesNothing},
		{"vendor never had it, reasoning", false, true, gone, false, owesNothing},
		{"gone before the first byte", true, false, gone, false, owesCount},
		{"gone before the first byte, reasoning", true, true, gone, false, owesHeld},
		{"gone after text", true, false, gone, true, owesCount},
		{"gone after text, reasoning, bound passed", true, true, gone, true, owesHeld},
		{"vendor error before text", true, false, vendor, false, owesNothing},
		{"vendor error before text, reasoning", true, true, vendor, false, owesNothing},
		{"vendor broke off after text", true, true, vendor, true, owesCount},
		{"unreadable answer", true, false, broken, false, owesCount},
		{"unreadable answer, reasoning", true, true, broken, false, owesHeld},
		{"ended without usage", true, false, nil, true, owesCount},
		{"ended without usage, reasoning", true, true, nil, true, owesCount},
	} {
		u := &upstream{}
		if tc.sent {
			u.sent.Mark()
		}
		if tc.drains {
			u.cancel = func(error) {}
		}
		if got := u.owed(tc.err, tc.delivered); got != tc.want {
			t.Errorf("%s: owes %d, want %d", tc.name, got, tc.want)
		}
	}
	var none *upstream // billing off
	if none.owed(gone, true) != owesCount || none.owed(gone, false) != owesNothing {
		t.Error("without billing: what was delivered is counted, nothing else")
	}
}
