/*
 * pause: the process that holds a Kubernetes pod's namespaces open (the
 * sandbox container). It does nothing but wait: SIGINT or SIGTERM ends it
 * with status 0, and, being PID 1 of the pod's PID namespace when the pod
 * shares one, it reaps every orphan that is re-parented to it. PID 1 gets no
 * default signal actions, so the handlers are what make it stoppable.
 *
 * Built static (gcc -static) so the image needs no libc: hack/image.sh pause.
 * `pause -v` prints the version.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef VERSION
#define VERSION "dev"
#endif

static void stop(int sig) {
	static const char term[] = "pause: shutting down on SIGTERM\n";
	static const char intr[] = "pause: shutting down on SIGINT\n";
	if (sig == SIGTERM) {
		(void)!write(STDERR_FILENO, term, sizeof term - 1);
	} else {
		(void)!write(STDERR_FILENO, intr, sizeof intr - 1);
	}
	_exit(0);
}

static void reap(int sig) {
	int saved = errno;
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	errno = saved;
}

static int on(int sig, void (*handler)(int), int flags) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv) {
	if (argc == 2 && strcmp(argv[1], "-v") == 0) {
		printf("pause %s\n", VERSION);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: pause [-v]\n");
		return 2;
	}
	if (getpid() != 1) {
		fprintf(stderr, "pause: warning: not PID 1, orphans are reaped only by PID 1\n");
	}
	if (on(SIGINT, stop, 0) < 0 || on(SIGTERM, stop, 0) < 0 ||
	    on(SIGCHLD, reap, SA_NOCLDSTOP | SA_RESTART) < 0) {
		perror("pause: sigaction");
		return 1;
	}
	for (;;) {
		pause();
	}
}
