/*
 * peak_rss FILE CMD [ARGS...]: run CMD, write its peak resident set size in KiB (getrusage
 * of the child, ru_maxrss) to FILE, and exit with its status. Built by the end-to-end tests
 * that check memory stays bounded (test_data.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: peak_rss FILE CMD [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return 2;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 2;
    fprintf(f, "%ld\n", ru.ru_maxrss);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
