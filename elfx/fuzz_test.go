package elfx_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// Seeds come from testdata; crashers found by `go test -fuzz` are kept under
// testdata/fuzz/<FuzzName>/ and replayed by every `go test` run.

func FuzzNewFile(f *testing.F) {
	for _, n := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "be.o", "i386.o",
		"k-gfx803.o", "k-gfx90a_xnackoff.co", "k-gfx803-v2.co", "libgpu.so", "libraw.so", "libraw-v2.so", "libexecstack.so", "libsysv.so", "libMIOpen.so",
		"checktree/lib/libdlopener.so", "checktree/lib/libdlbadnote.so"} {
		f.Add(readFixture(f, n))
	}
	for _, n := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "libsysv.so", "k-gfx803-v2.co"} {
		f.Add(testenv.StripSectionHeaders(readFixture(f, n))) // symbols through the dynamic segment
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		exercise(file)
	})
}

// FuzzMappedSymbolTable checks that the memory-mapped table (DynamicSymbolTable) never crashes
// and answers exactly like the copied one.
func FuzzMappedSymbolTable(f *testing.F) {
	for _, n := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so", "libMIOpen.so", "libgpu.so"} {
		f.Add(readFixture(f, n))
	}
	for _, n := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "libsysv.so"} {
		f.Add(testenv.StripSectionHeaders(readFixture(f, n)))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		fh, err := os.CreateTemp(dir, "fuzz-*.so")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(fh.Name())
		fh.Write(b)
		fh.Close()
		// Opened for what the loader reads, a section header table taken
		// as it is must be one Open, and the table read through it,
		// accept; and SectionHeaderError says what they say.
		if seg, err := elfx.OpenSegments(fh.Name()); err == nil {
			_, segErr := seg.DynamicSymbolTable()
			shdrErr := seg.SectionHeaderError()
			plain := seg.PlainSectionHeaders()
			seg.Close()
			var openErr error
			if whole, err := elfx.Open(fh.Name()); err != nil {
				openErr = err
			} else {
				_, openErr = whole.DynamicSymbolTable()
				whole.Close()
			}
			if plain && segErr == nil && openErr != nil {
				t.Fatalf("section header table taken as it is, but Open and its table say: %v", openErr)
			}
			if !plain && fmt.Sprint(shdrErr) != fmt.Sprint(openErr) {
				t.Fatalf("SectionHeaderError = %v, Open and its table say %v", shdrErr, openErr)
			}
		}
		file, err := elfx.Open(fh.Name())
		if err != nil {
			return
		}
		defer file.Close()
		copied, err1 := file.CopiedSymbolTable()
		mapFile, err := elfx.Open(fh.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer mapFile.Close()
		mapFile.MapAlways()
		mapped, err2 := mapFile.DynamicSymbolTable()
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("copied table error %v, mapped %v", err1, err2)
		}
		// Small tables are read in one piece; that view must agree too.
		piece, err3 := file.DynamicSymbolTable()
		if (err1 == nil) != (err3 == nil) {
			t.Fatalf("copied table error %v, read in one piece %v", err1, err3)
		}
		if err1 != nil {
			return
		}
		if u1, u3 := copied.Undefined(), piece.Undefined(); !reflect.DeepEqual(u1, u3) {
			t.Fatalf("Undefined differs: %d vs %d symbols read in one piece", len(u1), len(u3))
		}
		for i := 1; i < min(copied.Len(), 64); i++ {
			n := copied.Symbol(i).Name
			if a, b := copied.Lookup(n), piece.Lookup(n); !reflect.DeepEqual(a, b) {
				t.Fatalf("Lookup(%q) differs read in one piece: %v vs %v", n, a, b)
			}
		}
		u1, u2 := copied.Undefined(), mapped.Undefined()
		if !reflect.DeepEqual(u1, u2) {
			t.Fatalf("Undefined differs: %d vs %d symbols", len(u1), len(u2))
		}
		names := []string{"", "foo_api", "malloc"}
		for i := 1; i < min(copied.Len(), 64); i++ {
			names = append(names, copied.Symbol(i).Name)
		}
		for _, n := range names {
			a, b := copied.Lookup(n), mapped.Lookup(n)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("Lookup(%q) differs: %v vs %v", n, a, b)
			}
			// Binds says what the definitions Lookup finds say, on
			// both views.
			for _, tab := range []*elfx.SymbolTable{copied, mapped} {
				if err := checkBindsName(tab, n, a); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !reflect.DeepEqual(copied.VersionNeeds(), mapped.VersionNeeds()) || !reflect.DeepEqual(copied.VersionDefs(), mapped.VersionDefs()) {
			t.Fatal("version tables differ")
		}
		if err := mapped.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzArchive(f *testing.F) {
	for _, n := range []string{"libgnu.a", "libbsd.a", "libthin.a"} {
		f.Add(readFixture(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The index's names one by one and in runs of whole names.
		var names []string
		var runs []byte
		ok, err1 := elfx.EachIndexName(bytes.NewReader(b), int64(len(b)), "fuzz", func(n []byte) bool { names = append(names, string(n)); return true })
		ok2, err2 := elfx.EachIndexNames(bytes.NewReader(b), int64(len(b)), "fuzz", func(r []byte) bool { runs = append(runs, r...); return true })
		if ok != ok2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("EachIndexName %v, %v; EachIndexNames %v, %v", ok, err1, ok2, err2)
		}
		if joined := strings.Join(names, "\x00") + "\x00"; err1 == nil && ok && len(names) > 0 && string(runs) != joined {
			t.Fatalf("runs %q, names %q", runs, names)
		}
		sameArchive(t, b)
		a, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		defer a.Close()
		if ok && err1 == nil && a.HasIndex {
			var idx []string
			for _, s := range a.Symbols {
				idx = append(idx, s.Name)
			}
			if !slices.Equal(idx, names) {
				t.Fatalf("EachIndexName read %d names, the archive's index has %d", len(names), len(idx))
			}
		}
		for i := range a.Members { // every member read as inspect reads it
			if sr, err := a.Open(i); err == nil {
				if f, err := elfx.NewFileSize(sr, sr.Size(), a.MemberPath(i)); err == nil {
					f.Symbols()
					f.GPUCodeObjects()
					f.Close()
				}
			}
		}
		for i, m := range a.Members {
			// A member's first bytes (kept from the parse) read as the
			// file holds them.
			if sr, err := a.Open(i); err == nil && m.External == "" {
				for _, k := range []int64{8, 64, 100} {
					got := make([]byte, k)
					n, _ := sr.ReadAt(got, 0)
					if want := b[m.Offset:][:min(m.Size, k)]; !bytes.Equal(got[:n], want) {
						t.Fatalf("member %d: first %d bytes %q, want %q", i, k, got[:n], want)
					}
				}
			}
			if file, err := a.OpenELF(i); err == nil {
				exercise(file)
			}
		}
	})
}

func FuzzOffloadBundle(f *testing.F) {
	f.Add(readFixture(f, "bundle.hipfb"))
	f.Add([]byte("CCOB\x02\x00\x02\x00\xff\xff\xff\xff"))
	for v := uint16(1); v <= 3; v++ {
		f.Add(ccob(f, readFixture(f, "bundle.hipfb"), v, 0))
		f.Add(ccob(f, readFixture(f, "bundle.hipfb"), v, 1))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		bundle, err := elfx.ParseOffloadBundle(bytes.NewReader(b), 0, int64(len(b)))
		if err != nil {
			return
		}
		region := int64(len(b))
		if bundle.Compressed {
			region = bundle.UncompressedSize // entries are in the payload
		}
		for _, e := range bundle.Entries {
			if e.Offset < 0 || e.Size < 0 || e.Offset+e.Size > region {
				t.Fatalf("entry %q [%d,+%d) outside %d bytes", e.ID, e.Offset, e.Size, region)
			}
			if len(e.Head) > 64 || int64(len(e.Head)) > e.Size {
				t.Fatalf("entry %q head of %d bytes", e.ID, len(e.Head))
			}
		}
	})
}
