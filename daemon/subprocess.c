// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One child, its stdout and stderr read through two pipes with poll(), so
 * that neither fills while the other is read; what does not fit in the
 * caller's buffers is read and dropped, so the child never blocks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "subprocess.h"

int subprocess_run(char *const argv[], char *out, size_t outlen, char *errout,
		   size_t errlen)
{
	int po[2], pe[2], status, r;
	size_t no = 0, ne = 0;
	struct pollfd fds[2];
	pid_t pid;

	out[0] = errout[0] = '\0';
	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		r = -errno;
		close(po[0]);
		close(po[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return r;
	}
	if (pid == 0) {
		if (dup2(po[1], STDOUT_FILENO) < 0 ||
		    dup2(pe[1], STDERR_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "%s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	fds[0] = (struct pollfd){ .fd = po[0], .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		char buf[4096];
		ssize_t n;
		int i;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			char *dst = i ? errout : out;
			size_t cap = i ? errlen : outlen, *used = i ? &ne : &no;

			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				continue;
			}
			if (*used + 1 < cap) {
				size_t k = (size_t)n < cap - 1 - *used ?
						   (size_t)n :
						   cap - 1 - *used;

				memcpy(dst + *used, buf, k);
				*used += k;
				dst[*used] = '\0';
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	/* One line for messages: systemctl's own, without its newline. */
	while (ne && (errout[ne - 1] == '\n' || errout[ne - 1] == ' '))
		errout[--ne] = '\0';
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
