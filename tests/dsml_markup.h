/*
 * dsml_markup.h - the DSML markup of a completion as C string literals, for
 * writing test completions: the special tokens and the V4.1 tags of a calls
 * block.
 */
#ifndef DSML_DSML_MARKUP_H
#define DSML_DSML_MARKUP_H

#define FW "\xef\xbd\x9c" /* U+FF5C */
#define EOS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"
#define DSML FW "DSML" FW
#define OPEN "\n\n<" DSML " calls>\n"
#define CLOSE "</" DSML " calls>"
#define INVOKE(n) "<" DSML " invoke name=\"" n "\">\n"
#define INVOKE_END "</" DSML " invoke>\n"
#define PARAM_TAG "<" DSML " parameter"
#define PARAM_END "</" DSML " parameter>\n"
#define PARAM(k, s, v) PARAM_TAG " name=\"" k "\" string=\"" s "\">" v PARAM_END

#endif
