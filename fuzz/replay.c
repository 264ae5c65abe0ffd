/*
 * replay.c - runs a fuzz target without libFuzzer: every file named on the
 * command line, and every file of every directory named (in name order),
 * goes once through LLVMFuzzerTestOneInput.  ctest runs each target's seed
 * corpus this way; a failed check aborts with the file's name printed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 0;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            fprintf(stderr, "%s: out of memory\n", path);
            return 0;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return 0;
    }
    /* an exact-size copy, as libFuzzer passes its inputs */
    unsigned char *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return 0;
    }
    memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            char **p = realloc(names, cap * sizeof *p);
            if (p == NULL)
                break;
            names = p;
        }
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (names[n] == NULL)
            break;
        snprintf(names[n], l, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            ok &= run_file(names[i]);
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return ok;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    int ok = 1;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            ok = 0;
        } else if (S_ISDIR(st.st_mode)) {
            ok &= run_dir(argv[i], &count);
        } else {
            ok &= run_file(argv[i]);
            count++;
        }
    }
    printf("%s: %zu inputs replayed\n", argc > 0 ? argv[0] : "replay", count);
    if (count == 0) {
        fprintf(stderr, "no inputs\n");
        return 1;
    }
    return ok ? 0 : 1;
}
