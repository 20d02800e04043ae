package dcopy

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// files makes a source of size random bytes and an empty destination of
// dstSize bytes in dir.
func files(t *testing.T, dir string, size, dstSize int) (src, dst *os.File, data []byte) {
	t.Helper()
	data = make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if err := os.WriteFile(filepath.Join(dir, "src"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	dst, err = os.Create(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	if err := dst.Truncate(int64(dstSize)); err != nil {
		t.Fatal(err)
	}
	return src, dst, data
}

// dirInMemory reports whether dir is on a file system kept in memory,
// where nothing is written directly (set where that can be told).
var dirInMemory = func(dir string) bool { return false }

// directDir is a scratch directory where direct writes can be tested:
// t.TempDir(), or when TMPDIR is a tmpfs (where Copy writes nothing
// directly, on purpose) one under /var/tmp, which is on disk by
// convention.
func directDir(t *testing.T) string {
	dir := t.TempDir()
	if !dirInMemory(dir) {
		return dir
	}
	if d, err := os.MkdirTemp("/var/tmp", "dcopy-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		if !dirInMemory(d) {
			return d
		}
	}
	return dir
}

// TestCopy: whatever the offsets, the bytes arrive where they should and
// nothing else in the destination changes; where the offsets agree modulo
// Align (and the host and file system allow it) all but the unaligned
// head and tail go directly.
func TestCopy(t *testing.T) {
	const size = 3<<20 + 777
	for _, c := range []struct {
		name                  string
		dstOff, srcOff, n     int64
		wantDirect, congruent bool
	}{
		{"aligned", 8192, 4096, 2 << 20, true, true},
		{"agreeing, unaligned", 5000, 904, 2<<20 + 123, true, true},
		{"disagreeing", 5001, 904, 2 << 20, false, false},
		{"short", 4096, 4096, Align + 100, false, true},
		{"to the end of the source", 4096 + 777, 777, size - 777, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dst, data := files(t, directDir(t), size, 8<<20)
			cp := New(src, dst)
			defer cp.Close()
			direct, err := cp.Copy(c.dstOff, c.srcOff, c.n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(dst.Name())
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 8<<20)
			copy(want[c.dstOff:], data[c.srcOff:c.srcOff+c.n])
			if !bytes.Equal(got, want) {
				t.Fatalf("destination differs")
			}
			if !c.wantDirect {
				if direct != 0 {
					t.Errorf("%d bytes written directly", direct)
				}
				return
			}
			if !cp.Direct() && direct == 0 {
				if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
					testenv.Missing(t, "direct I/O in "+filepath.Dir(dst.Name()), "a file system with O_DIRECT, such as ext4 or XFS, for TMPDIR or /var/tmp")
				}
				t.Skip("no direct I/O on this host")
			}
			head := (Align - c.dstOff%Align) % Align
			if want := (c.n - head) / Align * Align; direct != want {
				t.Errorf("%d bytes written directly, want %d", direct, want)
			}
		})
	}
}

// TestCopyPastTheSource: a source shorter than the range (truncated since
// it was read) is an error, not a panic or a short copy taken for whole.
func TestCopyPastTheSource(t *testing.T) {
	src, dst, _ := files(t, t.TempDir(), 1<<20, 4<<20)
	cp := New(src, dst)
	defer cp.Close()
	if _, err := cp.Copy(0, 0, 2<<20); err == nil {
		t.Error("copying past the end of the source succeeded")
	}
}
