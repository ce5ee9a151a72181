package carrier

import (
	"regexp"
	"sync"
	"testing"

	"github.com/google/uuid"
)

var idPattern = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`)

func TestNewExternalTransactionIDFormat(t *testing.T) {
	for range 1000 {
		id := NewExternalTransactionID()
		if !idPattern.MatchString(id) {
			t.Fatalf("%q is not 26 Crockford base32 characters", id)
		}
	}
}

// Ids made concurrently by many goroutines of one process never repeat, and
// ids made one after another sort in creation order.
func TestNewExternalTransactionIDUnique(t *testing.T) {
	const workers, each = 8, 5000
	ids := make(chan string, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				ids <- NewExternalTransactionID()
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := make(map[string]bool, workers*each)
	for id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}

	prev := NewExternalTransactionID()
	for range 10000 {
		id := NewExternalTransactionID()
		if id <= prev {
			t.Fatalf("%s after %s: not increasing", id, prev)
		}
		prev = id
	}
}

func TestEncodeCrockford(t *testing.T) {
	tests := []struct {
		in   uuid.UUID
		want string
	}{
		{uuid.UUID{}, "00000000000000000000000000"},
		{uuid.UUID{15: 1}, "00000000000000000000000001"},
		{uuid.UUID{15: 32}, "00000000000000000000000010"},
		{uuid.Max, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{uuid.MustParse("01890a5d-ac96-774b-bcce-b302099a8057"), "01H455VB4PEX5VSKNK084SN02Q"}, // checked with Python: int(hex, 16) in base 32,
	}
	for _, tt := range tests {
		if got := encodeCrockford(tt.in); got != tt.want {
			t.Errorf("encodeCrockford(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
