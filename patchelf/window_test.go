package patchelf

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// The string window used by verification must stay small while it walks a
// multi-megabyte .dynstr in order: it once doubled at every string that
// crossed its end, growing to the size of the table.
func TestStrWindowStaysSmall(t *testing.T) {
	const base = 64
	data := make([]byte, base, 4<<20)
	copy(data, elf.ELFMAG)
	data[elf.EI_CLASS], data[elf.EI_DATA], data[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	binary.LittleEndian.PutUint16(data[16:], uint16(elf.ET_DYN))
	binary.LittleEndian.PutUint16(data[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(data[20:], 1)
	binary.LittleEndian.PutUint16(data[52:], 64)
	r := rand.New(rand.NewPCG(1, 2))
	var starts []uint64
	data = append(data, 0)
	for len(data) < 3<<20 {
		starts = append(starts, uint64(len(data)-base))
		n := 1 + r.IntN(300)
		if r.IntN(1000) == 0 {
			n = 200 << 10 // a few names longer than the window
		}
		for range n {
			data = append(data, 'a'+byte(r.IntN(26)))
		}
		data = append(data, 0)
	}
	f, err := elfx.NewFileSize(bytes.NewReader(data), int64(len(data)), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	w := strWindow{f: f, base: base, size: uint64(len(data) - base)}
	for _, s := range starts {
		got, err := w.get(s)
		if err != nil {
			t.Fatal(err)
		}
		tab := data[base:]
		want := tab[s : s+uint64(bytes.IndexByte(tab[s:], 0))]
		if !bytes.Equal(got, want) {
			t.Fatalf("string at %d: got %d bytes, want %d", s, len(got), len(want))
		}
	}
	if c := cap(w.buf); c > 512<<10 {
		t.Errorf("window grew to %d KiB walking a %d KiB table (longest string 200 KiB)", c>>10, len(data)>>10)
	}
}

func TestSortByHigh32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	v := make([]uint64, 50000)
	for i := range v {
		v[i] = uint64(r.Uint32N(1<<22))<<32 | uint64(i)
	}
	want := slices.Clone(v)
	slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>32, b>>32) })
	sortByHigh32(v)
	if !slices.Equal(v, want) {
		t.Fatal("radix sort differs from a stable sort on the upper 32 bits")
	}
}

func TestNameDigestSeparatesIndexAndName(t *testing.T) {
	seen := map[uint64]string{}
	for idx := uint32(0); idx < 200; idx++ {
		for _, name := range []string{"", "a", "b", "malloc", "mallod", "_ZN4llvm11LLVMContextC1Ev"} {
			d := nameDigest(idx, []byte(name))
			if prev, dup := seen[d]; dup {
				t.Fatalf("(%d, %q) collides with %s", idx, name, prev)
			}
			seen[d] = fmt.Sprintf("(%d, %q)", idx, name)
		}
	}
	if a, b := nameDigest(7, []byte("x")), nameDigest(7, []byte("x")); a != b {
		t.Fatal("not deterministic within a process")
	}
}

func TestSortUint64s(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, limit := range []uint64{1, 2, 1 << 11, 1 << 22, 1 << 40, 0} {
		for _, n := range []int{0, 1, 2, 3, 1000, 30000} {
			v := make([]uint64, n)
			for i := range v {
				if limit == 0 {
					v[i] = r.Uint64()
				} else {
					v[i] = r.Uint64N(limit)
				}
			}
			want := slices.Clone(v)
			slices.Sort(want)
			sortUint64s(v)
			if !slices.Equal(v, want) {
				t.Fatalf("%d values below %d: radix sort differs from slices.Sort", n, limit)
			}
		}
	}
}

func TestDiffRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	a := make([]byte, 5000)
	for i := range a {
		a[i] = byte(r.IntN(4))
	}
	for trial := 0; trial < 300; trial++ {
		b := slices.Clone(a)
		for k := r.IntN(6); k > 0; k-- {
			at, n := r.IntN(len(b)), 1+r.IntN(600)
			for i := at; i < min(len(b), at+n); i++ {
				b[i] = byte(r.IntN(4))
			}
		}
		b = b[:len(b)-r.IntN(300)]
		// The ranges a byte at a time.
		var want [][2]int
		for i := 0; i < len(b); i++ {
			if a[i] != b[i] {
				if len(want) > 0 && want[len(want)-1][1] == i {
					want[len(want)-1][1]++
				} else {
					want = append(want, [2]int{i, i + 1})
				}
			}
		}
		if got := diffRanges(a, b); !slices.Equal(got, want) {
			t.Fatalf("trial %d: %v, want %v", trial, got, want)
		}
	}
}
