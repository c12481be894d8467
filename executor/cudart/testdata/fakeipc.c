// A stand-in for libcudart's memory and IPC calls, for tests without a GPU:
// "device memory" is a POSIX shared-memory object, mapped; its "handle" holds
// the object's name; cudaMalloc makes one (unlinked again by cudaFree);
// copies are bounds-checked memcpy. Only device 0 exists.
// Error codes are the CUDA runtime's: 1 invalid value, 101 invalid device
// ordinal, 201 invalid context (here: an unknown handle).
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct { char reserved[64]; } handle_t;

// The mappings open now.
static struct { char* base; size_t size; char name[64]; } maps[16];

int cudaSetDevice(int d) { return d == 0 ? 0 : 101; }

int cudaIpcOpenMemHandle(void** p, handle_t h, unsigned int flags) {
	char name[65];
	memcpy(name, h.reserved, 64);
	name[64] = 0;
	int slot = 0;
	while (slot < 16 && maps[slot].base) slot++;
	if (slot == 16) return 2;
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0) return 201;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size == 0) { close(fd); return 201; }
	void* m = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) return 201;
	maps[slot].base = m;
	maps[slot].size = st.st_size;
	maps[slot].name[0] = 0;
	*p = m;
	return 0;
}

int cudaIpcCloseMemHandle(void* p) {
	for (int i = 0; i < 16; i++) {
		if (maps[i].base == p && !maps[i].name[0]) {
			munmap(p, maps[i].size);
			maps[i].base = NULL;
			return 0;
		}
	}
	return 1;
}

int cudaMalloc(void** p, size_t size) {
	static int made;
	int slot = 0;
	while (slot < 16 && maps[slot].base) slot++;
	if (slot == 16) return 2;
	snprintf(maps[slot].name, 64, "/fakecudart-%d-%d", getpid(), made++);
	int fd = shm_open(maps[slot].name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) return 2;
	if (ftruncate(fd, size) != 0) { close(fd); shm_unlink(maps[slot].name); return 2; }
	void* m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) { shm_unlink(maps[slot].name); return 2; }
	maps[slot].base = m;
	maps[slot].size = size;
	*p = m;
	return 0;
}

int cudaIpcGetMemHandle(handle_t* h, void* p) {
	for (int i = 0; i < 16; i++) {
		if (maps[i].base == p && maps[i].name[0]) {
			memset(h->reserved, 0, 64);
			strcpy(h->reserved, maps[i].name);
			return 0;
		}
	}
	return 1;
}

int cudaFree(void* p) {
	for (int i = 0; i < 16; i++) {
		if (maps[i].base == p && maps[i].name[0]) {
			munmap(p, maps[i].size);
			shm_unlink(maps[i].name);
			maps[i].base = NULL;
			maps[i].name[0] = 0;
			return 0;
		}
	}
	return 1;
}

static int inside(const void* p, size_t n) {
	const char* c = p;
	for (int i = 0; i < 16; i++) {
		if (maps[i].base && c >= maps[i].base && c + n <= maps[i].base + maps[i].size) return 1;
	}
	return 0;
}

int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
	if ((kind == 1 && !inside(dst, n)) || (kind == 2 && !inside(src, n)) || (kind != 1 && kind != 2)) return 1;
	memcpy(dst, src, n);
	return 0;
}

const char* cudaGetErrorString(int rc) {
	switch (rc) {
	case 101: return "invalid device ordinal";
	case 201: return "invalid device context";
	default: return "invalid argument";
	}
}
