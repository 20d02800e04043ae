package inflate

import (
	"bytes"
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
