package elfx_test

import (
	"bytes"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// Seeds come from testdata; crashers found by `go test -fuzz` are kept under
// testdata/fuzz/<FuzzName>/ and replayed by every `go test` run.

func FuzzNewFile(f *testing.F) {
	for _, n := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "be.o", "i386.o",
		"k-gfx803.o", "k-gfx90a_xnackoff.co", "libgpu.so", "libraw.so", "libexecstack.so", "libsysv.so", "libMIOpen.so"} {
		f.Add(readFixture(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		exercise(file)
	})
}

func FuzzArchive(f *testing.F) {
	for _, n := range []string{"libgnu.a", "libbsd.a", "libthin.a"} {
		f.Add(readFixture(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		defer a.Close()
		elfx.InspectArchive(a)
		for i := range a.Members {
			if file, err := a.OpenELF(i); err == nil {
				exercise(file)
			}
		}
	})
}

func FuzzOffloadBundle(f *testing.F) {
	f.Add(readFixture(f, "bundle.hipfb"))
	f.Add([]byte("CCOB\x02\x00\x02\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		bundle, err := elfx.ParseOffloadBundle(bytes.NewReader(b), 0, int64(len(b)))
		if err != nil {
			return
		}
		for _, e := range bundle.Entries {
			if e.Offset < 0 || e.Size < 0 || e.Offset+e.Size > int64(len(b)) {
				t.Fatalf("entry %q [%d,+%d) outside %d bytes", e.ID, e.Offset, e.Size, len(b))
			}
		}
	})
}
