/*
 * dsml_markup.h - the DSML markup that test completions are written with:
 * the end-of-sentence token and the calls block's tags, spelled as the
 * model writes them (V4.1, spaced tag names).
 */
#ifndef DSML_TEST_MARKUP_H
#define DSML_TEST_MARKUP_H

#include <dsml/dsml.h>

#define FW "\xef\xbd\x9c" /* U+FF5C */
#define EOS DSML_TOKEN_EOS
#define DSML DSML_TOKEN_DSML
#define OPEN DSML_CALLS_OPEN "\n"
#define CLOSE "</" DSML " calls>"
#define INVOKE(n) "<" DSML " invoke name=\"" n "\">\n"
#define INVOKE_END "</" DSML " invoke>\n"
#define PARAM_TAG "<" DSML " parameter"
#define PARAM_END "</" DSML " parameter>\n"
#define PARAM(k, s, v) PARAM_TAG " name=\"" k "\" string=\"" s "\">" v PARAM_END

#endif
