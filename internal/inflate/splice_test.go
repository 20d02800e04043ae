package inflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"runtime"
	"testing"
)

// splice runs the whole path: index the original, compare the new data,
// plan and write the new stream.
func splice(t *testing.T, comp, newData []byte, marks [][2]int64) (*Spliced, []byte) {
	t.Helper()
	idx, err := Decode(io.Discard, bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	ch := idx.NewChanges()
	for i := 0; i < len(newData); i += 1000 { // in pieces, across blocks
		ch.Write(newData[i:min(len(newData), i+1000)])
	}
	for _, m := range marks {
		ch.Mark(m[0], m[1])
	}
	// The comparison's CRC is the new data's, shorter or longer than the
	// original.
	if got, want := ch.CRC(), crc32.ChecksumIEEE(newData); got != want {
		t.Fatalf("Changes.CRC %08x, want %08x (%d new bytes, %d original)", got, want, len(newData), idx.Size)
	}
	sp, err := PlanSplice(bytes.NewReader(comp), idx, bytes.NewReader(newData), int64(len(newData)), ch.Changed(), flate.BestSpeed, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, err := sp.WriteTo(&out)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(out.Len()) || n != sp.Size() {
		t.Fatalf("wrote %d bytes (counted %d), planned %d", out.Len(), n, sp.Size())
	}
	got, err := io.ReadAll(flate.NewReader(bytes.NewReader(out.Bytes())))
	if err != nil {
		t.Fatalf("compress/flate cannot read the spliced stream: %v", err)
	}
	if !bytes.Equal(got, newData) {
		t.Fatalf("spliced stream inflates to %d bytes that differ from the %d new ones", len(got), len(newData))
	}
	return sp, out.Bytes()
}

func TestSpliceEdits(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for name, data := range corpus(t) {
		for _, level := range []int{flate.NoCompression, 1, 6} {
			comp := deflate(t, data, level)
			for trial := 0; trial < 12; trial++ {
				nd := append([]byte(nil), data...)
				var marks [][2]int64
				switch trial % 4 {
				case 0: // a few in-place edits
					for e := 0; e < 3 && len(nd) > 0; e++ {
						off := rng.Intn(len(nd))
						n := min(len(nd)-off, 1+rng.Intn(300))
						rng.Read(nd[off : off+n])
						marks = append(marks, [2]int64{int64(off), int64(off + n)})
					}
				case 1: // edits at both ends and an appended tail
					if len(nd) > 100 {
						copy(nd[10:], "PATCHED")
						copy(nd[len(nd)-50:], "PATCHED TOO")
					}
					tail := make([]byte, rng.Intn(100000))
					rng.Read(tail)
					nd = append(nd, tail...)
				case 2: // truncated
					nd = nd[:rng.Intn(len(nd)+1)]
				case 3: // unchanged
				}
				sp, _ := splice(t, comp, nd, marks)
				if trial%4 == 3 && sp.Compressed != 0 {
					t.Errorf("%s level %d: unchanged data compressed %d bytes again", name, level, sp.Compressed)
				}
			}
		}
	}
}

// Large data with small edits reuses almost all of the original stream.
func TestSpliceReuses(t *testing.T) {
	data := corpus(t)["mixed"]
	comp := deflate(t, data, 1)
	nd := append([]byte(nil), data...)
	copy(nd[100:], "ELF header edit")
	copy(nd[len(nd)/2:], "dynamic section edit")
	nd = append(nd, []byte("appended segment")...)
	sp, out := splice(t, comp, nd, nil)
	if sp.Reused < int64(len(data))*3/4 { // three edits, each costing a block or two of ~64 KiB
		t.Errorf("reused %d of %d bytes", sp.Reused, len(data))
	}
	if d := len(out) - len(comp); d > len(comp)/20 {
		t.Errorf("the spliced stream is %d bytes larger than the original's %d", d, len(comp))
	}
}

// An edit the byte comparison cannot see (same CRC is not possible to
// arrange here, so the edit is hidden by writing the old data) is still
// honoured when it is marked.
func TestSpliceMarkedRangeIsCompressed(t *testing.T) {
	data := corpus(t)["text"]
	comp := deflate(t, data, 6)
	sp, _ := splice(t, comp, data, [][2]int64{{5000, 5001}})
	if sp.Compressed == 0 {
		t.Errorf("a marked range was not compressed again")
	}
}

func TestSpliceLimit(t *testing.T) {
	data := corpus(t)["mixed"]
	comp := deflate(t, data, 1)
	idx, err := Decode(io.Discard, bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	all := make([]bool, len(idx.Blocks))
	for i := range all {
		all[i] = true
	}
	if _, err := PlanSplice(bytes.NewReader(comp), idx, bytes.NewReader(data), int64(len(data)), all, 1, 1<<20); !errors.Is(err, ErrNotWorthSplicing) {
		t.Errorf("everything changed, limit 1 MiB: %v", err)
	}
}

// FuzzSplice: any data, any level, an edit, a tail and a cut; the spliced
// stream must inflate to the new data (splice checks that).
func FuzzSplice(f *testing.F) {
	f.Add(bytes.Repeat([]byte("abcdefghij"), 9000), 1, uint32(40000), uint16(10), uint16(300), uint32(0))
	f.Add([]byte("short"), 0, uint32(1), uint16(2), uint16(0), uint32(3))
	f.Fuzz(func(t *testing.T, data []byte, level int, off uint32, n, tail uint16, cut uint32) {
		level = (level%11+11)%11 - 2 // -2 (Huffman only) .. 9
		comp := deflate(t, data, level)
		nd := append([]byte(nil), data...)
		if len(nd) > 0 {
			o := int(off) % len(nd)
			for i := o; i < min(len(nd), o+int(n)); i++ {
				nd[i] ^= 0x5a
			}
		}
		nd = append(nd, bytes.Repeat([]byte{byte(tail)}, int(tail)%5000)...)
		if cut > 0 {
			nd = nd[:int(cut)%(len(nd)+1)]
		}
		splice(t, comp, nd, nil)
	})
}

// copyBits appends any bit range at any pending bit count as a bit-by-bit
// copy would, across its 64 KiB buffer's flushes.
func TestCopyBits(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	src := make([]byte, 300000)
	rng.Read(src)
	bit := func(b []byte, i int64) uint64 { return uint64(b[i/8]>>(i%8)) & 1 }
	for trial := 0; trial < 200; trial++ {
		pre := uint(rng.Intn(8))
		preBits := uint64(rng.Intn(256)) & (1<<pre - 1)
		from := rng.Int63n(int64(len(src)) * 8)
		to := from + rng.Int63n(int64(len(src))*8-from+1)
		if trial%4 == 0 {
			to = from + rng.Int63n(200) // short ranges too
			to = min(to, int64(len(src))*8)
		}
		var out bytes.Buffer
		w := &bitWriter{w: &out, buf: make([]byte, 0, 1<<16)}
		w.bits(preBits, pre)
		if err := w.copyBits(bytes.NewReader(src), from, to); err != nil {
			t.Fatal(err)
		}
		total := int64(pre) + to - from
		w.align()
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
		got := out.Bytes()
		if int64(len(got)) != (total+7)/8 || w.bytes != int64(len(got)) {
			t.Fatalf("trial %d: %d bytes (counted %d), want %d", trial, len(got), w.bytes, (total+7)/8)
		}
		for i := int64(0); i < total; i++ {
			var want uint64
			if i < int64(pre) {
				want = preBits >> i & 1
			} else {
				want = bit(src, from+i-int64(pre))
			}
			if bit(got, i) != want {
				t.Fatalf("trial %d (%d pending bits, bits %d-%d): output bit %d differs", trial, pre, from, to, i)
			}
		}
	}
}

// Copying the original's blocks reads through one buffer: a stream of
// many stored blocks (incompressible data at any level) once took a fresh
// 1 MiB buffer per block, which on a 100 MB library was hundreds of MB of
// new memory for the kernel to zero.
func TestSpliceWriteReusesReadBuffer(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	data := make([]byte, 4<<20)
	rng.Read(data) // incompressible: stored blocks of at most 64 KiB
	comp := deflate(t, data, 1)
	nd := append([]byte(nil), data...)
	copy(nd[100:], "ELF header edit")
	sp, _ := splice(t, comp, nd, nil)
	stored := 0
	for _, b := range sp.idx.Blocks {
		if b.Type == 0 {
			stored++
		}
	}
	if stored < 32 {
		t.Fatalf("the fixture has %d stored blocks, want many", stored)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if _, err := sp.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 4<<20 {
		t.Errorf("writing a stream of %d stored blocks allocated %d bytes, want one read buffer", stored, got)
	}
}

// Touched and CRCWith give the blocks an edit changed and the new data's
// CRC-32, reading only those blocks, for a splice of a large edit.
func TestSpliceTouchedCRC(t *testing.T) {
	data := bytes.Repeat(corpus(t)["mixed"], 4) // 8 MB
	comp := deflate(t, data, 1)
	nd := bytes.Clone(data)
	edit := [2]int64{2 << 20, 5 << 20}
	for i := edit[0]; i < edit[1]; i++ {
		nd[i] ^= byte(i >> 7)
	}
	nd = append(nd, "APPENDED"...)
	marks := [][2]int64{edit, {int64(len(data)), int64(len(nd))}}
	sp, _ := splice(t, comp, nd, marks)
	if sp.Compressed < 3<<20 {
		t.Errorf("%d bytes compressed again, want the 3 MB edited at least", sp.Compressed)
	}
	idx, err := Decode(io.Discard, bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	changed := idx.Touched(marks)
	guard := guardedReader{nd, idx, changed}
	crc, err := idx.CRCWith(changed, guard, int64(len(nd)))
	if err != nil || crc != crc32.ChecksumIEEE(nd) {
		t.Fatalf("CRCWith %08x, %v; want %08x", crc, err, crc32.ChecksumIEEE(nd))
	}
	for k, b := range idx.Blocks {
		end := idx.end(k)
		if want := b.Out < edit[1] && end > edit[0]; changed[k] != want {
			t.Errorf("block %d [%d, %d): touched %v", k, b.Out, end, changed[k])
		}
	}
	if _, err := idx.CRCWith(changed[1:], guard, int64(len(nd))); err == nil {
		t.Error("CRCWith took changes for another index")
	}
}

// guardedReader fails reads outside the changed blocks and the end.
type guardedReader struct {
	data    []byte
	idx     *Index
	changed []bool
}

func (g guardedReader) ReadAt(b []byte, off int64) (int, error) {
	ok := off >= g.idx.Size
	for k, blk := range g.idx.Blocks {
		if g.changed[k] && off >= blk.Out && off+int64(len(b)) <= g.idx.end(k) {
			ok = true
		}
	}
	if !ok {
		return 0, fmt.Errorf("read of %d bytes at %d outside the changed blocks", len(b), off)
	}
	return copy(b, g.data[off:]), nil
}
