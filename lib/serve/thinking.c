/*
 * thinking.c - the thinking mode and the reasoning effort of a request body,
 * as clients send them: thinking_mode, chat_template_kwargs.thinking and
 * .enable_thinking (vLLM, SGLang), thinking as a bool or {"type": ...}
 * (DeepSeek's platform), reasoning_effort "none" (thinking off).  Fields
 * that disagree are refused, naming both; without any, the turn's default
 * (DeepSeek's platform's for the profile).  Effort names the profile does
 * not know go through an alias table: the platform's, or the caller's.
 */
#include <string.h>

#include "serve/serve.h"

/* ---- the thinking switch -------------------------------------------------- */

typedef struct sw {
    srv_req *q;
    const char *from; /* the first field read, or NULL */
    int on;
} sw;

/* One field's say: the first decides, a later one must agree. */
static int say(sw *s, const char *path, int on)
{
    if (s->from == NULL) {
        s->from = path;
        s->on = on;
        return DSML_OK;
    }
    if (s->on == on)
        return DSML_OK;
    return core_fail(s->q->c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET, path,
                     "%s turns thinking %s but %s turns it %s: the request contradicts "
                     "itself", path, on ? "on" : "off", s->from, s->on ? "on" : "off");
}

static int bool_say(sw *s, const char *path, const cJSON *v, const char *what)
{
    if (!json_is_bool(v))
        return core_fail(s->q->c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET, path,
                         "must be %s", what);
    return say(s, path, (v->type & 0xFF) == cJSON_True);
}

/* chat_template_kwargs: thinking (a bool or {"enabled": bool}) and
 * enable_thinking (a bool); its other members are listed as ignored. */
static int read_kwargs(sw *s, const cJSON *body)
{
    const cJSON *kw = json_get(body, "chat_template_kwargs");
    if (json_is_none(kw))
        return DSML_OK;
    if (!json_is_object(kw)) {
        srv_ignore(s->q, NULL, "chat_template_kwargs");
        return DSML_OK;
    }
    srv_ignore_members(s->q, "chat_template_kwargs", kw, "thinking", "enable_thinking");
    const cJSON *kwt = json_get(kw, "thinking");
    if (!json_is_none(kwt)) {
        const cJSON *on = json_is_object(kwt) ? json_get(kwt, "enabled") : kwt;
        int r = bool_say(s, "$.chat_template_kwargs.thinking", on,
                         "a bool or an object with a bool 'enabled'");
        if (r != DSML_OK)
            return r;
    }
    const cJSON *et = json_get(kw, "enable_thinking");
    if (json_is_none(et))
        return DSML_OK;
    return bool_say(s, "$.chat_template_kwargs.enable_thinking", et, "true or false");
}

/* thinking: a bool, or {"type": "enabled" | "disabled"} (other members
 * listed as ignored). */
static int read_thinking_field(sw *s, const cJSON *body)
{
    const cJSON *th = json_get(body, "thinking");
    if (json_is_none(th))
        return DSML_OK;
    if (json_is_bool(th))
        return bool_say(s, "$.thinking", th, "true or false");
    const cJSON *type = json_is_object(th) ? json_get(th, "type") : NULL;
    int on = srv_is_text(type, "enabled");
    if (!on && !srv_is_text(type, "disabled"))
        return core_fail(s->q->c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                         "$.thinking.type", "must be \"enabled\" or \"disabled\"");
    srv_ignore_members(s->q, "thinking", th, "type", NULL);
    return say(s, "$.thinking.type", on);
}

int srv_read_thinking(srv_req *q, const cJSON *body)
{
    dsml_rctx *c = q->c;
    sw s = {q, NULL, 0};
    const cJSON *tm = json_get(body, "thinking_mode");
    if (!json_is_none(tm)) {
        if (!json_is_string(tm))
            return core_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                             "$.thinking_mode", "must be \"chat\" or \"thinking\"");
        render_rctx_mode_text(c, tm->valuestring, strlen(tm->valuestring));
        if (c->mode == DSML_MODE_INVALID)
            return core_fail(c->err, DSML_ERR_THINKING_MODE, DSML_NO_OFFSET,
                             "$.thinking_mode", "Invalid thinking_mode `%s`",
                             c->mode_text);
        say(&s, "$.thinking_mode", c->mode == DSML_MODE_THINKING);
    }
    int r = read_kwargs(&s, body);
    if (r == DSML_OK)
        r = read_thinking_field(&s, body);
    if (r == DSML_OK && srv_is_text(json_get(body, "reasoning_effort"), "none"))
        r = say(&s, "$.reasoning_effort", 0);
    if (r != DSML_OK)
        return r;
    q->t->thinking_from = s.from != NULL ? s.from : "";
    if (s.from != NULL)
        c->mode = s.on ? DSML_MODE_THINKING : DSML_MODE_CHAT;
    else if (!q->t->mode_from_render && q->o->default_thinking != DSML_TURN_THINKING_PROFILE)
        c->mode = q->o->default_thinking == DSML_TURN_THINKING_ON ? DSML_MODE_THINKING
                                                                 : DSML_MODE_CHAT;
    else if (!q->t->mode_from_render)
        c->mode = c->dialect->profile == DSML_PROFILE_V32 ? DSML_MODE_CHAT : DSML_MODE_THINKING;
    return DSML_OK;
}

/* ---- reasoning effort ------------------------------------------------------ */

/* DeepSeek's platform's effort mapping (api-docs "Thinking Mode"): for
 * V4.1, minimal -> low, medium -> high, xhigh -> high, ultra -> max; the
 * pre-release profile has xhigh of its own; V4 (high and max only) took
 * low and medium as high and xhigh as max.  V3.2 takes no effort. */
static const dsml_effort_alias v41_aliases[] = {
    {"minimal", "low", 0}, {"medium", "high", 0}, {"xhigh", "high", 0}, {"ultra", "max", 0}};
static const dsml_effort_alias prerelease_aliases[] = {
    {"minimal", "low", 0}, {"medium", "high", 0}, {"ultra", "max", 0}};
static const dsml_effort_alias v4_aliases[] = {{"minimal", "high", 0}, {"low", "high", 0},
                                               {"medium", "high", 0}, {"xhigh", "max", 0},
                                               {"ultra", "max", 0}};

/* The aliases in force: the caller's when given (an empty list: none),
 * else the platform's for the profile. */
static const dsml_effort_alias *aliases(const srv_req *q, size_t *n)
{
    if (q->o->effort_aliases != NULL) {
        *n = q->o->effort_alias_count;
        return q->o->effort_aliases;
    }
    switch (q->c->dialect->profile) {
    case DSML_PROFILE_V41:
        *n = sizeof v41_aliases / sizeof v41_aliases[0];
        return v41_aliases;
    case DSML_PROFILE_PRERELEASE:
        *n = sizeof prerelease_aliases / sizeof prerelease_aliases[0];
        return prerelease_aliases;
    case DSML_PROFILE_V4:
        *n = sizeof v4_aliases / sizeof v4_aliases[0];
        return v4_aliases;
    default:
        *n = 0;
        return NULL;
    }
}

static const dsml_effort_alias *find_alias(const dsml_effort_alias *a, size_t n,
                                           const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].name != NULL && strcmp(a[i].name, name) == 0)
            return &a[i];
    return NULL;
}

/* The reference's message for an effort refused, with the aliases added. */
static int refuse_effort(srv_req *q, const dsml_effort_alias *a, size_t n)
{
    dsml_rctx *c = q->c;
    dsml_buf names;
    core_buf_init(&names, &c->alloc);
    for (size_t i = 0; i < n; i++) {
        if (a[i].name == NULL)
            continue;
        DSML_BUF_LIT(&names, ", '");
        core_buf_puts(&names, a[i].name);
        core_buf_putc(&names, '\'');
    }
    core_buf_putc(&names, '\0');
    dsml_buf known;
    core_buf_init(&known, &c->alloc);
    for (size_t i = 0; i < c->dialect->nefforts; i++) {
        if (i > 0)
            DSML_BUF_LIT(&known, ", ");
        core_buf_putc(&known, '\'');
        core_buf_puts(&known, c->dialect->efforts[i].name);
        core_buf_putc(&known, '\'');
    }
    core_buf_putc(&known, '\0');
    int r = core_fail(c->err, DSML_ERR_EFFORT, DSML_NO_OFFSET, "$.reasoning_effort",
                      "Invalid reasoning effort: %s, should be %sone of [%s%s]",
                      c->effort_text,
                      render_rule(c, DSML_RULE_EFFORT_LEVELS) ? "int within [1,100] or " : "",
                      known.failed ? "" : known.data, names.failed ? "" : names.data);
    core_buf_release(&known);
    core_buf_release(&names);
    return r;
}

/* The effort: the body's (a name the profile refuses may be an alias;
 * "none" is the thinking switch, no effort), else the options'; checked
 * here, so that a request with no message is refused too. */
int srv_read_effort(srv_req *q, const cJSON *body)
{
    dsml_rctx *c = q->c;
    const cJSON *v = json_get(body, "reasoning_effort");
    if (v != NULL && !srv_is_text(v, "none"))
        render_rctx_effort_json(c, v);
    size_t n = 0;
    const dsml_effort_alias *a = aliases(q, &n);
    const dsml_effort_alias *alias =
        c->effort == DSML_EFF_INVALID && json_is_string(v) ? find_alias(a, n, v->valuestring)
                                                           : NULL;
    if (alias != NULL) {
        if (alias->as != NULL)
            render_rctx_effort_name(c, alias->as, strlen(alias->as));
        else
            render_rctx_effort_level(c, alias->level, NULL);
        if (c->effort == DSML_EFF_INVALID)
            return core_fail(c->err, DSML_ERR_ARGUMENT, DSML_NO_OFFSET, NULL,
                             "effort alias '%s' stands for %s, which the profile "
                             "does not accept", alias->name, c->effort_text);
    }
    int level = 0;
    int r = render_rctx_effort_value(c, &level);
    if (r != DSML_OK && n > 0)
        r = refuse_effort(q, a, n);
    q->t->info.effort_level = level;
    return r;
}
