namespace ck { namespace utils { int ck_utility_version() { return 1; } } }
