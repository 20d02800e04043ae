package testenv

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CompressedBundle wraps an uncompressed offload bundle the way
// clang-offload-bundler --compress does: "CCOB", format version 1, 2 or 3,
// a method (0 zlib, 1 zstd, anything else an unknown method with a stand-in
// payload), sizes, and the low half of the MD5 of inner. zstd payloads come
// from the checked-in stream of testdata/bundle.hipfb, or from the zstd
// command for other inputs.
func CompressedBundle(inner []byte, version, method uint16) ([]byte, error) {
	var payload []byte
	switch method {
	case 0:
		var buf bytes.Buffer
		zw := zlib.NewWriter(&buf)
		zw.Write(inner)
		zw.Close()
		payload = buf.Bytes()
	case 1:
		fixture, err := os.ReadFile(Testdata("bundle.hipfb"))
		if err != nil {
			return nil, err
		}
		if bytes.Equal(inner, fixture) {
			if payload, err = os.ReadFile(filepath.Join(root(), "internal", "zstd", "testdata", "bundle.hipfb.zst")); err != nil {
				return nil, err
			}
			break
		}
		cmd := exec.Command("zstd", "-q", "-c", "-3")
		cmd.Stdin = bytes.NewReader(inner)
		if payload, err = cmd.Output(); err != nil {
			return nil, fmt.Errorf("zstd command: %w", err)
		}
	default:
		payload = []byte("stand-in payload of an unknown method")
	}
	sum := md5.Sum(inner)
	le := binary.LittleEndian
	out := []byte("CCOB")
	out = le.AppendUint16(out, version)
	out = le.AppendUint16(out, method)
	switch version {
	case 1:
		out = le.AppendUint32(out, uint32(len(inner)))
	case 2:
		out = le.AppendUint32(out, uint32(24+len(payload)))
		out = le.AppendUint32(out, uint32(len(inner)))
	case 3:
		out = le.AppendUint64(out, uint64(32+len(payload)))
		out = le.AppendUint64(out, uint64(len(inner)))
	}
	out = le.AppendUint64(out, le.Uint64(sum[:8]))
	return append(out, payload...), nil
}

// CompressFatbin returns a copy of the host library lib whose .hip_fatbin
// section (one bundle, as in testdata/libgpu.so) is replaced by
// CompressedBundle of it, zero-padded to the section size, and the
// section's file offset.
func CompressFatbin(lib []byte, version, method uint16) ([]byte, int64, error) {
	sec, err := fatbinSection(lib)
	if err != nil {
		return nil, 0, err
	}
	z, err := CompressedBundle(lib[sec.Offset:sec.Offset+sec.Size], version, method)
	if err != nil {
		return nil, 0, err
	}
	if uint64(len(z)) > sec.Size {
		return nil, 0, fmt.Errorf("compressed bundle of %d bytes does not fit the %d-byte section", len(z), sec.Size)
	}
	out := bytes.Clone(lib)
	clear(out[sec.Offset : sec.Offset+sec.Size])
	copy(out[sec.Offset:], z)
	return out, int64(sec.Offset), nil
}

// fatbinSection is the .hip_fatbin section of the host library lib.
func fatbinSection(lib []byte) (*elf.Section, error) {
	f, err := elf.NewFile(bytes.NewReader(lib))
	if err != nil {
		return nil, err
	}
	sec := f.Section(".hip_fatbin")
	if sec == nil {
		return nil, fmt.Errorf("no .hip_fatbin section")
	}
	return sec, nil
}

// DamagedFatbin is testdata/libgpu.so with its .hip_fatbin section
// overwritten with 0xee bytes (no offload bundle left in it: device code
// that cannot be read), and that section.
func DamagedFatbin(t testing.TB) ([]byte, *elf.Section) {
	t.Helper()
	lib, err := os.ReadFile(Testdata("libgpu.so"))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := fatbinSection(lib)
	if err != nil {
		t.Fatalf("libgpu.so: %v", err)
	}
	copy(lib[sec.Offset:sec.Offset+sec.Size], bytes.Repeat([]byte{0xee}, int(sec.Size)))
	return lib, sec
}
