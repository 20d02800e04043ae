//go:build !unix

package elfx

import "os"

func idOf(os.FileInfo) FileID { return FileID{} }
