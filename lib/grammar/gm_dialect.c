/*
 * gm_dialect.c - what a grammar writes around tool calls and keeps out of
 * reasoning and content, made from the profile's dialect table
 * (lib/dialect: the block's and the tags' names after the DSML marker,
 * whether names are qualified).  The special tokens are the family's
 * (DIALECTS.md: shared by V3.2, V4 and V4.1).  A dialect added to
 * lib/dialect has its grammar without a change here.
 */
#include <stdarg.h>
#include <string.h>

#include "dialect/dialect.h"
#include "grammar/grammar.h"

#define D DSML_TOKEN_DSML

/* Reasoning and content hold none of these (the reference's last check). */
static const char *const specials[] = {DSML_TOKEN_BOS, DSML_TOKEN_EOS, "<think>", "</think>", D};

typedef struct composer {
    gm_dialect *d;
    size_t used;
    int full;
} composer;

/* Appends the concatenation of the NULL-terminated pieces to the store;
 * returns it ("" once the store is full: c->full tells). */
static const char *compose(composer *c, ...)
{
    char *out = c->d->store + c->used;
    va_list ap;
    va_start(ap, c);
    for (const char *s = va_arg(ap, const char *); s != NULL && !c->full;
         s = va_arg(ap, const char *)) {
        size_t n = strlen(s);
        if (c->used + n + 1 > sizeof c->d->store) {
            c->full = 1;
        } else {
            memcpy(c->d->store + c->used, s, n);
            c->used += n;
        }
    }
    va_end(ap);
    if (c->full)
        return "";
    c->d->store[c->used++] = '\0';
    return out;
}

/* Whether a tag name needs no escaping in a literal or a regular
 * expression: letters, '_' and ' ' (the family's names are). */
static int plain_name(const char *s)
{
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == ' '))
            return 0;
    return 1;
}

int gm_dialect_init(gm_dialect *d, dsml_profile profile, dsml_error *err)
{
    const dsml_dialect *dd = dialect_of(profile);
    if (dd == NULL)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL, "unknown profile %d",
                         (int)profile);
    const char *b = dd->tags->block, *inv = dd->tags->invoke, *par = dd->tags->param;
    if (!plain_name(b) || !plain_name(inv) || !plain_name(par))
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "the tag names of the %s dialect are not letters, '_' and ' '",
                         dd->name);
    memset(d, 0, sizeof *d);
    composer c = {d, 0, 0};
    d->profile = profile;
    d->name = dd->name;
    d->namespaces = (dd->rules & DSML_RULE_NAMESPACES) != 0;
    d->think_end = "</think>";
    d->block_open = compose(&c, "\n\n<", D, b, ">\n", (char *)NULL);
    d->block_close = compose(&c, "\n</", D, b, ">", (char *)NULL);
    d->invoke_open = compose(&c, "<", D, inv, " name=\"", (char *)NULL);
    d->invoke_name_end = "\">\n";
    d->invoke_close = compose(&c, "</", D, inv, ">", (char *)NULL);
    d->invoke_sep = "\n";
    d->param_open = compose(&c, "<", D, par, " name=\"", (char *)NULL);
    d->param_string = "\" string=\"true\">";
    d->param_json = "\" string=\"false\">";
    d->param_close = compose(&c, "</", D, par, ">", (char *)NULL);
    d->param_stop = compose(&c, "/", D, par, (char *)NULL);
    d->name_stops[0] = compose(&c, "<", D, par, (char *)NULL);
    d->name_stops[1] = compose(&c, "</", D, inv, (char *)NULL);
    d->key_stops[0] = d->param_stop;
    d->key_stops[1] = "\" string=\"";
    d->trigger = compose(&c, "\n\n<", D, b, ">", (char *)NULL);
    /* plain names: nothing to escape */
    d->trigger_pattern_chat = compose(&c, "[\\s\\S]*?(\\n\\n<", D, b, ">)[\\s\\S]*", (char *)NULL);
    d->trigger_pattern_thinking =
        compose(&c, "[\\s\\S]*?</think>[\\s\\S]*?(\\n\\n<", D, b, ">)[\\s\\S]*", (char *)NULL);
    d->specials = specials;
    d->nspecials = sizeof specials / sizeof specials[0];
    if (c.full)
        return core_fail(err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                         "the tags of the %s dialect do not fit the grammar's store", dd->name);
    return DSML_OK;
}
