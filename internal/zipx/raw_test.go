package zipx

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRawCopyPast4GiB copies every entry of an archive/zip file (data
// descriptors, one stored, one deflated) byte for byte into a file whose
// archive starts past 4 GiB (a sparse hole), with their central records'
// offsets moved there: archive/zip reads every entry back, and the end
// records are zip64's.
func TestRawCopyPast4GiB(t *testing.T) {
	var src bytes.Buffer
	zw := zip.NewWriter(&src)
	want := map[string]string{"a.txt": strings.Repeat("alpha ", 1000), "b/c.bin": "stored"}
	w, _ := zw.Create("a.txt")
	io.WriteString(w, want["a.txt"])
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "b/c.bin", Method: zip.Store})
	io.WriteString(w, want["b/c.bin"])
	zw.Close()
	raw := bytes.NewReader(src.Bytes())
	recs, err := CentralRecords(raw, int64(src.Len()))
	if err != nil || len(recs) != 2 {
		t.Fatalf("records: %v %d", err, len(recs))
	}
	p := filepath.Join(t.TempDir(), "out.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const base = 5 << 30
	f.Seek(base, io.SeekStart)
	out := NewWriter(f, base)
	for i := len(recs) - 1; i >= 0; i-- { // written backwards, listed in order
		l, err := LocalOf(raw, recs[i])
		if err != nil || l.Descriptor == 0 {
			t.Fatalf("%s: %+v %v (archive/zip writes a descriptor)", recs[i].Name(), l, err)
		}
		at := out.Offset()
		out.Write(src.Bytes()[l.Header:l.End])
		out.Central(i, recs[i].WithOffset(at))
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for i, zf := range zr.File {
		if zf.Name != recs[i].Name() {
			t.Errorf("entry %d is %s", i, zf.Name)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != want[zf.Name] {
			t.Errorf("%s: %v %q", zf.Name, err, b)
		}
		if off, _ := zf.DataOffset(); off < base {
			t.Errorf("%s: data at %#x", zf.Name, off)
		}
	}
	// A descriptor that does not repeat the directory's values is named.
	bad := bytes.Clone(src.Bytes())
	l, _ := LocalOf(raw, recs[0])
	bad[l.End-l.Descriptor+4] ^= 0xff
	if _, err := LocalOf(bytes.NewReader(bad), recs[0]); err == nil || !strings.Contains(err.Error(), "data descriptor") {
		t.Errorf("damaged descriptor: %v", err)
	}
}

// NewLocal keeps an old header's version, times, name and extra fields,
// sets the values given, adds a zip64 field for sizes past 4 GiB, and
// drops an old zip64 field and zipalign padding.
func TestNewLocal(t *testing.T) {
	var src bytes.Buffer
	zw := zip.NewWriter(&src)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate, Extra: []byte{0x55, 0x54, 1, 0, 7}})
	io.WriteString(w, "x")
	zw.Close()
	recs, _ := CentralRecords(bytes.NewReader(src.Bytes()), int64(src.Len()))
	l, _ := LocalOf(bytes.NewReader(src.Bytes()), recs[0])
	old := src.Bytes()[l.Header:l.Data]
	padded := append(bytes.Clone(old), 0x35, 0xd9, 2, 0, 0, 0)
	le.PutUint16(padded[28:], le.Uint16(padded[28:])+6)
	h := NewLocal(padded, 0x12345678, 5<<30, 6<<30, 0)
	if le.Uint32(h[14:]) != 0x12345678 || le.Uint32(h[18:]) != max32 || le.Uint16(h[4:]) != 45 {
		t.Errorf("header % x", h[:30])
	}
	extra := h[30+1:]
	if z := field(extra, zip64ID); len(z) != 16 || le.Uint64(z) != 6<<30 || le.Uint64(z[8:]) != 5<<30 {
		t.Errorf("zip64 field % x", z)
	}
	if field(extra, alignID) != nil || field(extra, 0x5455) == nil {
		t.Errorf("extra % x", extra)
	}
	if !bytes.Equal(h[6:14], append([]byte{0, 0}, old[8:14]...)) {
		t.Errorf("flags, method or times changed: % x vs % x", h[6:14], old[6:14])
	}
}
