package zipx

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// centralAt returns a one-member zip whose central directory puts the
// member's local header at off.
func centralAt(t *testing.T, off uint32) *zip.File {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "pkg/lib.so", Method: zip.Store})
	w.Write([]byte("\x7fELF and more"))
	zw.Close()
	b := buf.Bytes()
	i := bytes.Index(b, []byte("PK\x01\x02"))
	binary.LittleEndian.PutUint32(b[i+42:], off)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return zr.File[0]
}

func TestDataOffsetOutsideTheFile(t *testing.T) {
	zf := centralAt(t, 0)
	if off, err := DataOffset(zf); err != nil || off != 30+int64(len("pkg/lib.so")) {
		t.Fatalf("good member: %d, %v", off, err)
	}
	rc, err := Open(zf)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(rc); err != nil || string(b) != "\x7fELF and more" {
		t.Errorf("good member reads %q, %v", b, err)
	}
	for off, want := range map[uint32]string{
		1 << 20:    "the central directory puts its local header outside the file",
		0x7ffffff0: "the central directory puts its local header outside the file",
		5:          "no local header where the central directory puts it",
	} {
		zf := centralAt(t, off)
		_, err := DataOffset(zf)
		if !errors.Is(err, zip.ErrFormat) || !strings.Contains(err.Error(), want) {
			t.Errorf("offset %#x: DataOffset says %v", off, err)
		}
		if _, err := Open(zf); !errors.Is(err, zip.ErrFormat) {
			t.Errorf("offset %#x: Open says %v", off, err)
		}
	}
}

func TestOpenNamesTheMethod(t *testing.T) {
	zf := centralAt(t, 0)
	zf.Method = 93
	if _, err := Open(zf); err == nil || !strings.Contains(err.Error(), "compressed with Zstandard (method 93)") {
		t.Errorf("Open: %v", err)
	}
}

func TestHead(t *testing.T) {
	elf := append([]byte("\x7fELF\x02\x01\x01"), bytes.Repeat([]byte("library "), 4096)...)
	for _, m := range []uint16{zip.Store, zip.Deflate} {
		_, zf := testenv.OneMember(t, "pkg/lib.so", elf, m)
		if got, err := Head(zf, 20); err != nil || !bytes.Equal(got, elf[:20]) {
			t.Errorf("method %d: Head = %q, %v; want the first 20 bytes", m, got, err)
		}
		_, zf = testenv.OneMember(t, "pkg/lib.so", []byte("\x7fEL"), m)
		if got, err := Head(zf, 20); err != nil || string(got) != "\x7fEL" {
			t.Errorf("method %d: Head of a 3-byte member = %q, %v", m, got, err)
		}
	}
	// A deflate stream that does not decode from its first bits: block
	// type 3 is reserved.
	b, zf := testenv.OneMember(t, "pkg/lib.so", elf, zip.Deflate)
	off, err := DataOffset(zf)
	if err != nil {
		t.Fatal(err)
	}
	b[off] = 0xff
	if _, err := Head(zf, 20); err == nil {
		t.Errorf("Head of a member that does not decode: no error")
	}
	// A short member whose CRC-32 does not match what it holds.
	b, zf = testenv.OneMember(t, "pkg/lib.so", []byte("\x7fEL"), zip.Store)
	if off, err = DataOffset(zf); err != nil {
		t.Fatal(err)
	}
	b[off+1] = 'X'
	if _, err := Head(zf, 20); !errors.Is(err, zip.ErrChecksum) {
		t.Errorf("Head of a short member with a wrong CRC-32: %v, want zip.ErrChecksum", err)
	}
}
