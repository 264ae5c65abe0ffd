/*
 * ids.c - the ids of a response and of its tool calls: a random source of
 * the responder's own (xoshiro256**, seeded from getrandom() or from the
 * caller's bytes) and the ids drawn from it.  No state outside the
 * responder.
 */
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "serve/serve.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next64(srv_rng *g)
{
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

void srv_rng_seed(srv_rng *g, const unsigned char *seed, size_t n)
{
    unsigned char buf[32];
    if (seed == NULL) {
        size_t got = 0;
        while (got < sizeof buf) {
            ssize_t k = getrandom(buf + got, sizeof buf - got, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        if (got < sizeof buf) {
            /* no getrandom(): the clock and this state's address */
            struct timespec ts;
            timespec_get(&ts, TIME_UTC);
            uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
            x ^= (uint64_t)(uintptr_t)g;
            memcpy(buf, &x, sizeof x);
            got = sizeof x;
        }
        seed = buf;
        n = got;
    }
    /* fold the bytes into one word, then spread it over the state */
    uint64_t x = 0x6a09e667f3bcc908ull ^ (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        x ^= seed[i];
        x = splitmix64(&x);
    }
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
}

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

size_t srv_rng_id(srv_rng *g, const char *prefix, char *out, size_t cap)
{
    size_t n = strlen(prefix);
    if (n + SRV_ID_CHARS + 1 > cap)
        return 0;
    memcpy(out, prefix, n);
    size_t k = 0;
    while (k < SRV_ID_CHARS) {
        uint64_t w = next64(g);
        for (int b = 0; b < 8 && k < SRV_ID_CHARS; b++, w >>= 8) {
            unsigned v = (unsigned)(w & 0xff);
            if (v < 248) /* 4 x 62: no bias */
                out[n + k++] = alphabet[v % 62];
        }
    }
    out[n + k] = '\0';
    return n + k;
}
