/*
 * profiles.c - lookups in the profile and detector-mode tables of
 * profiles.h.
 */
#include <string.h>

#include "cli.h"

#define CLI_PROFILE_ENTRY_(name, profile, flags, what) {name, profile, flags, what},
static const cli_profile_info profiles[] = {CLI_PROFILE_LIST(CLI_PROFILE_ENTRY_)};
#undef CLI_PROFILE_ENTRY_

#define CLI_DETECT_MODE_ENTRY_(name, mode) {name, mode},
static const struct {
    const char *name;
    dsml_detect_mode mode;
} modes[] = {CLI_DETECT_MODE_LIST(CLI_DETECT_MODE_ENTRY_)};
#undef CLI_DETECT_MODE_ENTRY_

const cli_profile_info *cli_profile_find(const char *name)
{
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(profiles[i].name, name) == 0)
            return &profiles[i];
    return NULL;
}

const cli_profile_info *cli_profile_info_of(dsml_profile p)
{
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (profiles[i].profile == p)
            return &profiles[i];
    return &profiles[0];
}

const char *cli_profile_name(dsml_profile p) { return cli_profile_info_of(p)->name; }

int cli_parse_detect_mode(const char *s, dsml_detect_mode *m)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(modes[i].name, s) == 0) {
            *m = modes[i].mode;
            return 0;
        }
    }
    return -1;
}

const char *cli_detect_mode_name(dsml_detect_mode m)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (modes[i].mode == m)
            return modes[i].name;
    return modes[0].name;
}
