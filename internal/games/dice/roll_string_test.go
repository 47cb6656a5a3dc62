package dice_test

import (
	"fmt"
	"testing"

	"github.com/fairplay/fairplay/internal/games/dice"
)

// TestRollStringEveryRoll: String writes every roll that can be drawn (and
// a few that cannot) as two-decimal text, as fmt did before it was written
// by hand.
func TestRollStringEveryRoll(t *testing.T) {
	for r := dice.Roll(-150); r <= dice.Outcomes+150; r++ {
		if got, want := r.String(), fmt.Sprintf("%d.%02d", r/100, r%100); got != want {
			t.Fatalf("Roll(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

func BenchmarkRollString(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = dice.Roll(i % dice.Outcomes).String()
	}
}
