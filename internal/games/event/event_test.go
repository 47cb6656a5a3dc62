package event

import (
	"math"
	"slices"
	"testing"
)

func TestIndex(t *testing.T) {
	t.Parallel()
	const maxFloat = float64(math.MaxUint32) / (1 << 32) // largest Stream float
	tests := []struct {
		name string
		f    float64
		n    int
		want int
	}{
		{"zero", 0, 52, 0},
		{"half of 2", 0.5, 2, 1},
		{"just below half", 0.49999999976716936, 2, 0},
		{"largest float of 10001", maxFloat, 10001, 10000},
		{"largest float of 52", maxFloat, 52, 51},
		{"0.7467 of 10001", 0.7467, 10001, 7467},
		{"negative clamps", -0.5, 10, 0},
		{"NaN clamps", math.NaN(), 10, 0},
		{"one clamps", 1, 10, 9},
		{"inf clamps", math.Inf(1), 10, 9},
		{"n = 1", maxFloat, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Index(tt.f, tt.n); got != tt.want {
				t.Fatalf("Index(%v, %d) = %d, want %d", tt.f, tt.n, got, tt.want)
			}
		})
	}
}

func TestSample(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		floats Floats
		n, k   int
		want   []int
	}{
		{"first of each remaining pool", Floats{0, 0, 0}, 5, 3, []int{0, 1, 2}},
		{"last of each remaining pool", Floats{0.99, 0.99, 0.99}, 5, 3, []int{4, 3, 2}},
		// Removal keeps order: after drawing 2 from [0 1 2 3 4], index 2 of [0 1 3 4] is 3.
		{"order-preserving removal", Floats{0.5, 0.5}, 5, 2, []int{2, 3}},
		{"everything", Floats{0.99, 0, 0.5, 0}, 4, 4, []int{3, 0, 2, 1}},
		{"nothing", Floats{}, 4, 0, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := slices.Clone(tt.floats)
			got := Sample(&src, tt.n, tt.k)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Sample = %v, want %v", got, tt.want)
			}
			if len(src) != 0 {
				t.Fatalf("Sample left %d floats unread; it must read exactly k", len(src))
			}
		})
	}
}

// TestSampleIsUniform walks every float combination on a fine grid for a small board and
// checks each ordered draw is equally likely, i.e. the selection has no bias of its own.
func TestSampleIsUniform(t *testing.T) {
	t.Parallel()
	const n, k, grid = 5, 2, 20 // 20 is a multiple of 5 and 4: each index gets equal weight
	counts := map[[2]int]int{}
	for a := range grid {
		for b := range grid {
			src := Floats{float64(a) / grid, float64(b) / grid}
			d := Sample(&src, n, k)
			counts[[2]int{d[0], d[1]}]++
		}
	}
	if len(counts) != n*(n-1) {
		t.Fatalf("%d distinct ordered draws, want %d", len(counts), n*(n-1))
	}
	for pair, c := range counts {
		if c != grid*grid/(n*(n-1)) {
			t.Fatalf("draw %v seen %d times, want %d", pair, c, grid*grid/(n*(n-1)))
		}
	}
}

func TestSamplePanicsOnBadK(t *testing.T) {
	t.Parallel()
	for _, k := range []int{-1, 6} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Sample(k=%d) did not panic", k)
				}
			}()
			src := Floats{0, 0, 0, 0, 0, 0}
			Sample(&src, 5, k)
		}()
	}
}

func FuzzSample(f *testing.F) {
	f.Add(uint8(25), uint8(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add(uint8(40), uint8(10), []byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, n, k uint8, seed []byte) {
		if n == 0 || n > 64 {
			return
		}
		k %= n + 1
		// Floats from the seed bytes: any value in [0, 1), including 0 and the largest.
		floats := make(Floats, k)
		for i := range floats {
			var u uint32
			for j := range 4 {
				if p := 4*i + j; p < len(seed) {
					u = u<<8 | uint32(seed[p])
				}
			}
			floats[i] = float64(u) / (1 << 32)
		}
		src := floats
		drawn := Sample(&src, int(n), int(k))
		if len(drawn) != int(k) || len(src) != 0 {
			t.Fatalf("drew %d of %d, %d floats left", len(drawn), k, len(src))
		}
		seen := make([]bool, n)
		for _, d := range drawn {
			if d < 0 || d >= int(n) || seen[d] {
				t.Fatalf("draw %v: %d out of range or repeated", drawn, d)
			}
			seen[d] = true
		}
	})
}
