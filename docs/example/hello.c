/* Keep a key in memory the kernel cannot casually read. cc hello.c $(pkg-config --cflags --libs libsecmem) */
#include <secmem.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	char *key = secmem_malloc(32);

	if (!key) {
		fprintf(stderr, "hello: %s\n", secmem_strerror(secmem_last_error()));
		return 1;
	}
	memcpy(key, "correct horse battery staple", 29);
	printf("key kept with the %s backend\n", secmem_backend_name(secmem_backend()));
	secmem_free(key); /* zeroed before it is reused */
	return 0;
}
