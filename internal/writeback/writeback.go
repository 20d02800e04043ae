// Package writeback lets a large new file reach the disk while it is still
// being written: rocmdoctor fsyncs every file it replaces before renaming
// it into place, and an fsync that finds hundreds of megabytes still dirty
// waits for all of them at the end. Writers call Start for each stretch
// they have written, and may Reserve a new file's size before writing it.
package writeback
