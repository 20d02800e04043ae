package finding

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

func TestMemberSepIsZipx(t *testing.T) {
	if memberSep != zipx.MemberSep {
		t.Fatalf("memberSep %q, zipx.MemberSep %q", memberSep, zipx.MemberSep)
	}
}

func TestFileErrorOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "stat", Path: "/x/a.so", Err: fs.ErrNotExist}, "/x/a.so: file does not exist"},
		{errors.New("/x/a.so: bad ELF header"), "/x/a.so: bad ELF header"},
		{errors.New("/x/a.so!/lib/b.so: bad ELF header"), "/x/a.so!/lib/b.so: bad ELF header"},
		{errors.New("truncated"), "/x/a.so: truncated"},
		{&fs.PathError{Op: "open", Path: "/x/other", Err: fs.ErrPermission}, "/x/a.so: open /x/other: permission denied"},
	} {
		if got := FileErrorOf("/x/a.so", c.err); got.Error != c.want || got.Path != "/x/a.so" {
			t.Errorf("FileErrorOf(%v) = %+v, want %q", c.err, got, c.want)
		}
	}
}
