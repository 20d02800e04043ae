package inflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
)

func decodeAll(comp []byte, k int) ([]byte, *Index, error) {
	var out bytes.Buffer
	idx, err := decode(&out, bytes.NewReader(comp), int64(len(comp)), k)
	return out.Bytes(), idx, err
}

// A parallel decode gives the sequential decode's output and index, block
// CRCs included, and on the larger inputs it uses what the speculative
// parts decoded.
func TestParallelMatchesSequential(t *testing.T) {
	type result struct {
		idx *Index
		out []byte
	}
	seq := map[string]result{}
	c := corpus(t)
	levels := []int{flate.HuffmanOnly, flate.NoCompression, 1, 6, 9}
	if raceDetector {
		c = map[string][]byte{"mixed": c["mixed"], "random": c["random"]}
		levels = []int{flate.NoCompression, 1, 9}
	}
	for name, data := range c {
		for _, level := range levels {
			comp := deflate(t, data, level)
			out, idx, err := decodeAll(comp, 1)
			if err != nil {
				t.Fatal(err)
			}
			seq[fmt.Sprint(name, level)] = result{idx, out}
		}
	}
	for _, k := range []int{2, 3, 4} {
		confirmed := 0
		for name, data := range c {
			for _, level := range levels {
				comp := deflate(t, data, level)
				out, idx, err := decodeAll(comp, k)
				if err != nil {
					t.Fatalf("%s level %d, %d parts: %v", name, level, k, err)
				}
				if !bytes.Equal(out, data) {
					t.Fatalf("%s level %d, %d parts: output differs", name, level, k)
				}
				want := seq[fmt.Sprint(name, level)].idx
				confirmed += idx.confirmed
				idx.confirmed = 0
				if !reflect.DeepEqual(idx, want) {
					t.Fatalf("%s level %d, %d parts: index differs from the sequential one", name, level, k)
				}
			}
		}
		// Level 1, 6 and 9 streams of the 2 MiB mixed input and the text
		// have many dynamic blocks after every cut.
		want := 3 * (k - 1)
		if raceDetector {
			want = 1 // two streams, and the race detector's scheduling
		}
		if confirmed < want {
			t.Errorf("%d parts: only %d speculative parts were used", k, confirmed)
		}
		t.Logf("%d parts: %d speculative parts used", k, confirmed)
	}
}

// Damaged streams fail with the sequential decoder's error, wherever the
// damage is relative to the cuts.
func TestParallelErrorsMatchSequential(t *testing.T) {
	data := corpus(t)["mixed"]
	comp := deflate(t, data, 6)
	for _, at := range []int{10, len(comp) / 3, len(comp) / 2, len(comp)/2 + 100, len(comp) - 10} {
		bad := bytes.Clone(comp)
		bad[at] ^= 0x5a
		want, _, werr := decodeAll(bad, 1)
		for _, k := range []int{2, 4} {
			out, _, err := decodeAll(bad, k)
			if fmt.Sprint(err) != fmt.Sprint(werr) {
				t.Fatalf("damage at %d, %d parts: %v; sequential: %v", at, k, err, werr)
			}
			if err == nil && !bytes.Equal(out, want) {
				t.Fatalf("damage at %d, %d parts: output differs from the sequential decode's", at, k)
			}
		}
	}
	for _, n := range []int{len(comp) / 2, len(comp) - 1} {
		if _, _, err := decodeAll(comp[:n], 3); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", n, len(comp))
		}
	}
}

func TestPartsFor(t *testing.T) {
	for _, c := range []struct {
		n     int64
		procs int
		want  int
	}{
		{1 << 20, 8, 1},         // small streams are not cut
		{parallelMin, 2, 1},     // two cores: no core to spare
		{parallelMin, 4, 2},     // 8 MiB in 4 MiB parts
		{parallelMin + 1, 4, 3}, // a part for the remainder
		{1 << 40, 64, maxParts}, // bounded
	} {
		if got := partsFor(c.n, c.procs); got != c.want {
			t.Errorf("partsFor(%d, %d) = %d, want %d", c.n, c.procs, got, c.want)
		}
	}
}

// A part whose output outgrows the bound stops with errTooLarge, which
// stops decoding ahead (errStopAhead), and the stream is still decoded
// correctly: the part decoded from the middle of a 6 MB program holds
// megabytes, more than a 64 KiB bound and less than the default one.
func TestParallelTooMuchOutput(t *testing.T) {
	data := corpus(t)["elf"]
	comp := deflate(t, data, 6)
	n := int64(len(comp))
	for _, c := range []struct {
		bound    int
		tooLarge bool
	}{{64 << 10, true}, {maxSpecOut, false}} {
		s := speculate(bytes.NewReader(comp), n, n/2, 0, bufSize(n), c.bound, new(atomic.Bool))
		if got := errors.Is(s.err, errTooLarge); got != c.tooLarge || c.tooLarge && !errors.Is(s.err, errStopAhead) {
			t.Errorf("bound %d: part error %v, want too large: %v", c.bound, s.err, c.tooLarge)
		}
		if s.d != nil {
			s.release()
		}
		var buf bytes.Buffer
		if _, err := decodeParallelMax(&buf, bytes.NewReader(comp), n, 4, c.bound); err != nil || !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("bound %d: err %v, output equal: %v", c.bound, err, bytes.Equal(buf.Bytes(), data))
		}
	}
}

// Incompressible data is stored blocks, which the search after a cut does
// not look for: the first part that finds no block stops all decoding
// ahead, and the stream is decoded sequentially, correctly.
func TestParallelStoredStream(t *testing.T) {
	data := corpus(t)["random"]
	data = bytes.Repeat(data, 8)[:2<<20]
	for i := range data {
		data[i] ^= byte(i * 7) // no repeats across the copies
	}
	comp := deflate(t, data, flate.NoCompression)
	out, idx, err := decodeAll(comp, 4)
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("err %v, output equal: %v", err, bytes.Equal(out, data))
	}
	if idx.confirmed != 0 {
		t.Errorf("%d parts of a stored stream were used", idx.confirmed)
	}
	if s := speculate(bytes.NewReader(comp), int64(len(comp)), int64(len(comp)/2), 0, bufSize(int64(len(comp))), maxSpecOut, new(atomic.Bool)); !errors.Is(s.err, errNoBlock) {
		t.Errorf("search in a stored stream: %v, want %v", s.err, errNoBlock)
	}
}
