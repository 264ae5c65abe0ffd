/*
 * profiles.h - the render profiles and detector modes dsml-render knows, as
 * one table each.  Every option that takes a profile or a mode (--profile,
 * --diff, parse --profile, audit --against, audit --mode), the usage texts
 * and the names printed in reports come from these tables: a profile the
 * library gains is one line here.
 */
#ifndef DSML_CLI_PROFILES_H
#define DSML_CLI_PROFILES_H

#include <dsml/dsml.h>

/*
 * X(name, profile, reference flags, what it is).  The reference flags are
 * the render flags under which the profile renders as its own reference
 * encoder does: the checkpoint's encoder refuses the developer role, the
 * serving image rendered it.  `dsml-render audit` renders each side this
 * way unless told otherwise.  The first line is the default.
 */
#define CLI_PROFILE_LIST(X)                                                    \
    X("v41", DSML_PROFILE_V41, DSML_RENDER_STRICT, "the checkpoint's encoder") \
    X("prerelease", DSML_PROFILE_PRERELEASE, 0u,                               \
      "the serving image's encoder before the 1017 cut")                       \
    X("v4", DSML_PROFILE_V4, 0u, "DeepSeek-V4's encoder (encoding_dsv4.py)")   \
    X("v32", DSML_PROFILE_V32, 0u, "DeepSeek-V3.2's encoder (encoding_dsv32.py)")

/* X(name, mode).  The first line is the default of `dsml-render audit
 * --parse`. */
#define CLI_DETECT_MODE_LIST(X)        \
    X("strict", DSML_DETECT_STRICT)    \
    X("lenient", DSML_DETECT_LENIENT)

/* " v41 prerelease": the names, each after a space, for usage texts. */
#define CLI_PROFILE_NAME_(name, profile, flags, what) " " name
#define CLI_PROFILE_NAMES CLI_PROFILE_LIST(CLI_PROFILE_NAME_)
#define CLI_DETECT_MODE_NAME_(name, mode) " " name
#define CLI_DETECT_MODE_NAMES CLI_DETECT_MODE_LIST(CLI_DETECT_MODE_NAME_)

typedef struct cli_profile_info {
    const char *name;
    dsml_profile profile;
    unsigned reference_flags;
    const char *what;
} cli_profile_info;

/* The table's entry named `name`, or NULL. */
const cli_profile_info *cli_profile_find(const char *name);
/* The entry of `p` (the first entry when `p` is not in the table). */
const cli_profile_info *cli_profile_info_of(dsml_profile p);

/* "strict", "lenient": returns 0, or -1 for a name not in the table. */
int cli_parse_detect_mode(const char *s, dsml_detect_mode *m);
const char *cli_detect_mode_name(dsml_detect_mode m);

#endif /* DSML_CLI_PROFILES_H */
