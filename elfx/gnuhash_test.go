package elfx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGNUHashBucket checks the multiplication that stands for h mod
// nbuckets against the division, at the edges and at random.
func TestGNUHashBucket(t *testing.T) {
	counts := []uint32{1, 2, 3, 7, 64, 1021, 4099, 65521, 1 << 20, math.MaxUint32 - 1, math.MaxUint32}
	hashes := []uint32{0, 1, 2, 0x7fffffff, 0x80000000, math.MaxUint32 - 1, math.MaxUint32}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		counts = append(counts, r.Uint32N(math.MaxUint32)+1)
		hashes = append(hashes, r.Uint32())
	}
	for _, n := range counts {
		g := &gnuHash{nbuckets: n, bucketsM: fastmodM(n)}
		for _, h := range hashes {
			if got, want := g.bucket(h), h%n; got != want {
				t.Fatalf("bucket(%#x) with %d buckets = %d, want %d", h, n, got, want)
			}
		}
	}
}
