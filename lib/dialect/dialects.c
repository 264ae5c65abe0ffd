/*
 * dialects.c - the dialects by profile, and looking up an effort name.
 */
#include "dialect/dialect.h"

static const dsml_dialect *const dialects[] = {
    &dialect_v41,
    &dialect_prerelease,
    &dialect_v4,
    &dialect_v32,
};

const dsml_dialect *dialect_of(dsml_profile profile)
{
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
        if (dialects[i]->profile == profile)
            return dialects[i];
    return NULL;
}

const dsml_effort *dialect_effort(const dsml_dialect *d, const char *name,
                                       size_t len)
{
    for (size_t k = 0; k < d->nefforts; k++)
        if (strlen(d->efforts[k].name) == len && memcmp(d->efforts[k].name, name, len) == 0)
            return &d->efforts[k];
    return NULL;
}
