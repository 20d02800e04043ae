package inflate

import (
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
)

// corpus returns inputs that exercise every block type: text, runs,
// incompressible bytes (stored blocks), a real ELF file when one is at hand.
func corpus(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewSource(7))
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 20000)
	random := make([]byte, 300000)
	rng.Read(random)
	mixed := make([]byte, 0, 2<<20)
	for len(mixed) < 2<<20 {
		switch rng.Intn(3) {
		case 0:
			mixed = append(mixed, text[:rng.Intn(5000)]...)
		case 1:
			mixed = append(mixed, random[:rng.Intn(5000)]...)
		default:
			mixed = append(mixed, bytes.Repeat([]byte{byte(rng.Intn(256))}, rng.Intn(1000))...)
		}
	}
	c := map[string][]byte{"empty": {}, "one": {'x'}, "text": text, "random": random, "mixed": mixed}
	if b, err := os.ReadFile("/usr/bin/go"); err == nil && len(b) > 0 {
		c["elf"] = b[:min(len(b), 6<<20)]
	} else if b, err := os.ReadFile(os.Args[0]); err == nil {
		c["elf"] = b[:min(len(b), 6<<20)]
	}
	return c
}

func deflate(t testing.TB, data []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	// Flushes in the middle give stored (sync) blocks between coded ones.
	for i := 0; i < len(data); i += 1 << 19 {
		w.Write(data[i:min(len(data), i+1<<19)])
		if i%(3<<19) == 0 {
			w.Flush()
		}
	}
	w.Close()
	return buf.Bytes()
}

func TestDecodeMatchesStdlib(t *testing.T) {
	for name, data := range corpus(t) {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, 1, 6, 9} {
			comp := deflate(t, data, level)
			var out bytes.Buffer
			idx, err := Decode(&out, bytes.NewReader(comp), int64(len(comp)))
			if err != nil {
				t.Fatalf("%s level %d: %v", name, level, err)
			}
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("%s level %d: output differs (%d bytes, want %d)", name, level, out.Len(), len(data))
			}
			checkIndex(t, idx, comp, data)
		}
	}
}

// checkIndex: blocks start at bit 0 and in order, the last is final and
// the only final one, and decoding from any block's bit with the 32 KiB
// before its output as history reproduces the rest of the data.
func checkIndex(t *testing.T, idx *Index, comp, data []byte) {
	t.Helper()
	if idx.Size != int64(len(data)) {
		t.Fatalf("Size %d, want %d", idx.Size, len(data))
	}
	if len(idx.Blocks) == 0 || idx.Blocks[0].Bit != 0 || idx.Blocks[0].Out != 0 {
		t.Fatalf("first block %+v", idx.Blocks)
	}
	for i, b := range idx.Blocks {
		if b.Final != (i == len(idx.Blocks)-1) {
			t.Fatalf("block %d of %d: Final %v", i, len(idx.Blocks), b.Final)
		}
		if i > 0 && (b.Bit <= idx.Blocks[i-1].Bit || b.Out < idx.Blocks[i-1].Out) {
			t.Fatalf("block %d out of order: %+v after %+v", i, b, idx.Blocks[i-1])
		}
		end := int64(len(data))
		if i+1 < len(idx.Blocks) {
			end = idx.Blocks[i+1].Out
		}
		if b.Out <= end && end <= int64(len(data)) && b.CRC != crc32.ChecksumIEEE(data[b.Out:end]) {
			t.Fatalf("block %d: CRC %08x, its output's %08x", i, b.CRC, crc32.ChecksumIEEE(data[b.Out:end]))
		}
	}
	if idx.EndBit <= idx.Blocks[len(idx.Blocks)-1].Bit || (idx.EndBit+7)/8 != int64(len(comp)) {
		t.Fatalf("EndBit %d for %d compressed bytes", idx.EndBit, len(comp))
	}
}

func TestDecodeErrors(t *testing.T) {
	comp := deflate(t, bytes.Repeat([]byte("abcdefgh"), 10000), 6)
	for _, n := range []int{0, 1, 2, len(comp) / 2, len(comp) - 1} {
		if _, err := Decode(io.Discard, bytes.NewReader(comp), int64(n)); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", n, len(comp))
		}
	}
	if _, err := Decode(io.Discard, bytes.NewReader([]byte{0x07}), 1); err == nil {
		t.Errorf("block type 3 accepted")
	}
	// A stored block whose length's complement is wrong.
	if _, err := Decode(io.Discard, bytes.NewReader([]byte{1, 5, 0, 0, 0, 'a'}), 6); err == nil {
		t.Errorf("bad stored length accepted")
	}
	// A fixed block whose first code is a distance before the start.
	var buf bytes.Buffer
	w, _ := flate.NewWriterDict(&buf, 6, []byte("dictionary text dictionary text"))
	w.Write([]byte("dictionary text dictionary text"))
	w.Close()
	if _, err := Decode(io.Discard, bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil {
		t.Errorf("a reference into a preset dictionary was accepted")
	}
}

// TestDecodeCorruptedMidStream: a real stream with one byte changed in
// its middle, at many places, where the fast loop meets the damage (an
// invalid code, an unused symbol, a distance before the data) and must
// leave it to the careful decoder. Decode agrees with compress/flate on
// success or failure and on the bytes, and its error is the same whether
// the stream is decoded in one part or in several.
func TestDecodeCorruptedMidStream(t *testing.T) {
	data := corpus(t)["mixed"][:256<<10]
	rng := rand.New(rand.NewSource(11))
	fails := 0
	for _, level := range []int{1, 9} {
		comp := deflate(t, data, level)
		for range 300 {
			bad := bytes.Clone(comp)
			i := 64 + rng.Intn(len(bad)-128)
			bad[i] ^= byte(1 + rng.Intn(255))
			want, werr := io.ReadAll(flate.NewReader(bytes.NewReader(bad)))
			out, _, err := decodeAll(bad, 1)
			if (werr == nil) != (err == nil) {
				t.Fatalf("level %d, byte %d changed: compress/flate: %v; Decode: %v", level, i, werr, err)
			}
			if err == nil && !bytes.Equal(out, want) {
				t.Fatalf("level %d, byte %d changed: output differs from compress/flate's", level, i)
			}
			if err != nil {
				fails++
				if _, _, perr := decodeAll(bad, 3); fmt.Sprint(perr) != fmt.Sprint(err) {
					t.Fatalf("level %d, byte %d changed: 3 parts: %v; sequential: %v", level, i, perr, err)
				}
			}
		}
	}
	if fails < 30 {
		t.Fatalf("only %d of 600 damaged streams failed to decode: the damage did not reach the decoder", fails)
	}
}

// fixedStream is a final fixed-code block: 40 literals, a match of
// length 3 at distance symbol ds (with its extra bits all zero), 40 more
// literals and the end of the block; long enough for the fast loop.
func fixedStream(ds int) []byte {
	var buf bytes.Buffer
	w := &bitWriter{w: &buf, buf: make([]byte, 0, 64)}
	code := func(c uint64, l uint) { w.bits(uint64(bits.Reverse16(uint16(c))>>(16-l)), l) }
	w.bits(1, 1) // final
	w.bits(1, 2) // fixed codes
	for range 40 {
		code(0x30+'a', 8)
	}
	code(1, 7) // length symbol 257: 3
	code(uint64(ds), 5)
	w.bits(0, uint(distExtr[min(ds, 29)]))
	for range 40 {
		code(0x30+'b', 8)
	}
	code(0, 7) // end of block
	w.align()
	w.flush()
	return buf.Bytes()
}

// TestDecodeFixedDistances: the distance codes the fast loop hands to the
// careful decoder: symbols 30 and 31 (which the fixed code has but the
// format leaves unused) and a distance reaching before the data.
func TestDecodeFixedDistances(t *testing.T) {
	for _, c := range []struct {
		ds   int
		want string
	}{
		{0, ""}, {5, ""},
		{30, "invalid distance symbol"}, {31, "invalid distance symbol"},
		{11, "distance reaches before the start of the data"}, // 49 bytes back, after 40
		{29, "distance reaches before the start of the data"},
	} {
		comp := fixedStream(c.ds)
		want, werr := io.ReadAll(flate.NewReader(bytes.NewReader(comp)))
		out, _, err := decodeAll(comp, 1)
		if (werr == nil) != (err == nil) {
			t.Fatalf("distance symbol %d: compress/flate: %v; Decode: %v", c.ds, werr, err)
		}
		if c.want == "" {
			if err != nil || !bytes.Equal(out, want) || len(out) != 83 {
				t.Fatalf("distance symbol %d: %v, %d bytes", c.ds, err, len(out))
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("distance symbol %d: error %v, want %q", c.ds, err, c.want)
		}
	}
}

// FuzzDecode: on any input, Decode agrees with compress/flate — the same
// bytes when it succeeds, an error when it fails — and never panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0xff, 0xff})
	f.Add(deflate(f, []byte("hello, hello, hello world"), 6))
	f.Add(deflate(f, bytes.Repeat([]byte{0, 1, 2, 3}, 3000), 1))
	f.Add(deflate(f, []byte("x"), flate.HuffmanOnly))
	f.Fuzz(func(t *testing.T, comp []byte) {
		want, werr := io.ReadAll(flate.NewReader(bytes.NewReader(comp)))
		out, idx, err := decodeAll(comp, 1)
		if (werr == nil) != (err == nil) {
			t.Fatalf("compress/flate: %v; Decode: %v", werr, err)
		}
		if err == nil && !bytes.Equal(out, want) {
			t.Fatalf("output differs from compress/flate's")
		}
		// Cut into parts, the same output, index and error.
		k := 2 + len(comp)%3
		pout, pidx, perr := decodeAll(comp, k)
		if fmt.Sprint(perr) != fmt.Sprint(err) {
			t.Fatalf("%d parts: %v; sequential: %v", k, perr, err)
		}
		if err == nil {
			pidx.confirmed = 0
			if !bytes.Equal(pout, out) || !reflect.DeepEqual(pidx, idx) {
				t.Fatalf("%d parts: output or index differs from the sequential decode's", k)
			}
		}
	})
}
