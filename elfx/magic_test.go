package elfx

import (
	"bytes"
	"math/rand"
	"testing"
)

// magicScanner must find what a search of the whole range finds, for
// magics anywhere (across the chunk boundaries too), overlapping ones,
// ranges that end inside a magic, and successive calls; and it reads
// through one buffer however many it finds.
func TestMagicScanner(t *testing.T) {
	defer func(c int) { magicChunk = c }(magicChunk)
	magics := []string{"__CLANG_OFFLOAD_BUNDLE__", "CCOB", "\x7fELF"}
	rng := rand.New(rand.NewSource(1))
	data := make([]byte, 20000)
	for i := range data {
		data[i] = "abcELF\x7f_CO"[rng.Intn(10)]
	}
	for _, at := range []int{0, 63, 64, 100, 127, 128, 129, 1000, 1003, 4095, 19990} {
		m := magics[at%len(magics)]
		copy(data[at:], m)
	}
	for at := 5000; at < 19000; at += 700 {
		copy(data[at:], "\x7fELF")
	}
	copy(data[19996:], "CCOB") // ends exactly at the end of the data
	naive := func(pos, end int) int {
		best := -1
		for _, m := range magics {
			if i := bytes.Index(data[pos:end], []byte(m)); i >= 0 && (best < 0 || i < best) {
				best = i
			}
		}
		if best < 0 {
			return -1
		}
		return pos + best
	}
	for _, chunk := range []int{8, 31, 64, 1000, 64 << 10} {
		magicChunk = chunk
		for _, end := range []int{len(data), 19999, 1002, 130, 20} {
			s := newMagicScanner(bytes.NewReader(data), 0, int64(end), magics...)
			var got, want []int
			for pos := 0; ; {
				at, ok, err := s.next(int64(pos))
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, int(at))
				pos = int(at) + 1
			}
			for pos := 0; pos < end; {
				at := naive(pos, end)
				if at < 0 {
					break
				}
				want = append(want, at)
				pos = at + 1
			}
			if len(want) < 3 && end > 1000 {
				t.Fatalf("the data has too few magics (%d)", len(want))
			}
			if !equalInts(got, want) {
				t.Errorf("chunk %d, end %d: found %v, want %v", chunk, end, got, want)
			}
			// Going back and jumping ahead.
			if len(want) > 2 {
				if at, ok, _ := s.next(0); !ok || int(at) != want[0] {
					t.Errorf("chunk %d: from 0 again: %d %v, want %d", chunk, at, ok, want[0])
				}
				if at, ok, _ := s.next(int64(want[2])); !ok || int(at) != want[2] {
					t.Errorf("chunk %d: from %d: %d %v", chunk, want[2], at, ok)
				}
			}
		}
	}
	// A short read is an error, not "no magic".
	magicChunk = 64
	s := newMagicScanner(bytes.NewReader(data[:100]), 0, 200, magics...)
	if _, _, err := s.next(101); err == nil {
		t.Error("reading past the data: no error")
	}
	// A small section gets a small buffer (archive members have
	// thousands of few-byte .rodata.* sections), and a range that does
	// not start at 0 is searched from its start.
	s = newMagicScanner(bytes.NewReader(data), 4990, 5010, magics...)
	if len(s.buf) > 20+len(magics[0]) {
		t.Errorf("a 20-byte range has a %d-byte buffer", len(s.buf))
	}
	if at, ok, err := s.next(4990); err != nil || !ok || at != 5000 {
		t.Errorf("in [4990, 5010): %d %v %v, want 5000", at, ok, err)
	}
	// One buffer for a whole section: no allocation per object found.
	magicChunk = 64 << 10
	r := bytes.NewReader(data)
	found := 0
	allocs := testing.AllocsPerRun(10, func() {
		s := newMagicScanner(r, 0, int64(len(data)), magics...)
		found = 0
		for pos := int64(0); ; {
			at, ok, _ := s.next(pos)
			if !ok {
				break
			}
			found++
			pos = at + 1
		}
	})
	if found < 25 || allocs > 8 {
		t.Errorf("%v allocations to find %d magics", allocs, found)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
