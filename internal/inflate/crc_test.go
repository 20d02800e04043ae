package inflate

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand"
	"testing"
)

func TestCombineCRC(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	data := make([]byte, 1<<16)
	rng.Read(data)
	for _, cut := range []int{0, 1, 7, 8, 1000, 1 << 15, len(data) - 1, len(data)} {
		a, b := data[:cut], data[cut:]
		got := CombineCRC(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b)))
		if want := crc32.ChecksumIEEE(data); got != want {
			t.Fatalf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}

// The index's CRC, combined from its blocks', is the CRC of the output.
func TestIndexCRC(t *testing.T) {
	for name, data := range corpus(t) {
		comp := deflate(t, data, 6)
		out, idx, err := decodeAll(comp, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data) || idx.CRC() != crc32.ChecksumIEEE(data) {
			t.Fatalf("%s: index CRC %08x, data's %08x", name, idx.CRC(), crc32.ChecksumIEEE(data))
		}
	}
}

// TestTables: the literal tables are what their definitions compute.
func TestTables(t *testing.T) {
	var x [32]uint32
	p := uint32(1) << 30 // x^1
	for k := range x {
		x[k] = p
		p = multModP(p, p)
	}
	if x != x2n {
		t.Errorf("x2n = %#v, computed %#v", x2n, x)
	}
	var k [64]uint32
	for i := range k {
		for _, l := range []int{i & 7, i >> 3} {
			if l != 0 {
				k[i] += 1<<(7-l) + 1<<16
			}
		}
	}
	if k != kraftPairs {
		t.Errorf("kraftPairs = %#v, computed %#v", kraftPairs, k)
	}
}

// TestSpecErrors: the reasons to stop decoding ahead wrap one another.
func TestSpecErrors(t *testing.T) {
	for _, e := range []error{errTooLarge, errNoBlock} {
		if !errors.Is(e, errStopAhead) || !errors.Is(e, errAbandoned) {
			t.Errorf("%v does not wrap errStopAhead and errAbandoned", e)
		}
	}
	if !errors.Is(errStopAhead, errAbandoned) || errors.Is(errAbandoned, errStopAhead) {
		t.Error("errStopAhead does not wrap errAbandoned alone")
	}
	if got, want := errNoBlock.Error(), "speculative decoding abandoned: the stream does not suit decoding in parts (no dynamic block after a cut)"; got != want {
		t.Errorf("errNoBlock = %q, want %q", got, want)
	}
}
