/* ELF dlopen metadata (the .note.dlopen specification): one note of owner
   "FDO" and type 0x407c0c0a whose descriptor is a NUL-terminated JSON array.
   DLOPEN_NOTE(var, "[{...}]") declares one; written for the fixtures, in the
   layout the specification gives (name padded to 4 bytes, 4-byte aligned). */
#define DLOPEN_NOTE(var, json)                                              \
	__attribute__((used, section(".note.dlopen"), aligned(4)))          \
	static const struct {                                               \
		unsigned int namesz, descsz, type;                          \
		char name[4];                                               \
		char desc[sizeof(json)];                                    \
	} var = { 4, sizeof(json), 0x407c0c0a, "FDO", json }
