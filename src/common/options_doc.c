/* Prints docs/configuration.md's table of variables from the options table
 * (options.c), the one the library compiles. Not part of the library: run by
 * scripts/gen_config_doc.sh (which puts the table between the doc's markers)
 * and by the test docs.configuration (which fails when the doc differs).
 * Exits 1, printing nothing, when a row could not make a sound doc row. */
#include <stdio.h>
#include <string.h>

#include "common/options.h"

static const char *word_of(const cc_option_t *o, uint64_t value)
{
    for (const cc_opt_choice_t *c = o->choices; c && c->word; c++)
        if ((uint64_t)c->value == value) return c->word;
    return NULL;
}

/* The value column: what the variable takes (docs/configuration.md, "Values"). */
static void print_kind(const cc_option_t *o)
{
    switch (o->kind) {
    case CC_KIND_SIZE: fputs("size", stdout); return;
    case CC_KIND_PERCENT: fputs("percentage", stdout); return;
    case CC_KIND_SWITCH: fputs("switch", stdout); return;
    case CC_KIND_PATH: fputs("path", stdout); return;
    case CC_KIND_LEVEL: fputs("level `0`-`4`", stdout); return;
    case CC_KIND_IGNORED: fputs("any", stdout); return;
    case CC_KIND_TEXT: fputs("text", stdout); return;
    case CC_KIND_MS: fputs("milliseconds `1`-`1000`", stdout); return;
    case CC_KIND_RATIO: fputs("ratio >= 1 (`2`, `1.5`)", stdout); return;
    case CC_KIND_ENUM:
        for (const cc_opt_choice_t *c = o->choices; c->word; c++)
            printf("%s`%s`", c == o->choices ? "" : c[1].word ? ", " : " or ", c->word);
        fputs(", in any case", stdout);
        return;
    }
}

static void print_default(const cc_option_t *o)
{
    switch (o->kind) {
    case CC_KIND_IGNORED:
    case CC_KIND_TEXT: fputs("-", stdout); break;
    case CC_KIND_MS:
    case CC_KIND_RATIO: fputs("none", stdout); break;
    case CC_KIND_PATH: printf("`%s`", o->def_path); break;
    case CC_KIND_ENUM: printf("`%s`", word_of(o, o->def)); break;
    case CC_KIND_SWITCH: fputs(o->def ? "on" : "off", stdout); break;
    case CC_KIND_LEVEL: printf("%llu", (unsigned long long)o->def); break;
    case CC_KIND_SIZE:
    case CC_KIND_PERCENT:
        /* A cap of 0 is no cap. */
        if (o->per_device && !o->def) fputs("none", stdout);
        else printf("%llu", (unsigned long long)o->def);
        break;
    }
    if (o->def_note) printf(" %s", o->def_note);
}

static void print_name(const char *name, int dev, const char *note)
{
    if (name) printf(" `%s%s`%s%s", name, dev ? "_<i>" : "", note ? " " : "", note ? note : "");
    printf(" |");
}

static void print_row(const cc_option_t *o, int dev)
{
    printf("|");
    print_name(o->name, dev, NULL);
    print_name(o->alias, dev, dev ? NULL : o->alias_note);
    print_name(o->seed, dev, NULL);
    printf(" ");
    print_kind(o);
    printf(" | %s | ", dev ? o->doc_dev : o->doc);
    print_default(o);
    printf(" |\n");
}

static int cell_ok(const char *s) { return !s || !strchr(s, '|'); }

/* What would make a wrong or broken row: said on stderr. */
static int check(const cc_option_t *o, int id)
{
    const char *what = NULL;
    if (!o->name && !o->alias && !o->seed) what = "no name";
    else if (!o->doc || (o->per_device && !o->doc_dev)) what = "no doc line";
    else if (!cell_ok(o->doc) || !cell_ok(o->doc_dev) || !cell_ok(o->alias_note) ||
             !cell_ok(o->def_note))
        what = "a '|' in a doc line";
    else if (o->kind == CC_KIND_ENUM && (!o->choices || !word_of(o, o->def)))
        what = "an enum whose default is not one of its words";
    else if (o->kind == CC_KIND_PATH && !o->def_path) what = "a path with no default";
    else if (!o->per_device && o->kind != CC_KIND_PATH && !o->bad)
        what = "no .bad (what a bad value gives, or why it is ignored)";
    if (what) fprintf(stderr, "options table, row %d (%s): %s\n", id, o->name ? o->name : o->alias ? o->alias : o->seed, what);
    return what == NULL;
}

int main(void)
{
    int ok = 1;
    for (int id = 0; id < CC_OPT_COUNT; id++) ok &= check(&cc_options[id], id);
    if (!ok) return 1;
    printf("| variable | HAMi / Volcano name | seed (vgpu-manager) name | value | meaning | default |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (int id = 0; id < CC_OPT_COUNT; id++) {
        print_row(&cc_options[id], 0);
        if (cc_options[id].per_device) print_row(&cc_options[id], 1);
    }
    return 0;
}
