/* The options table: every environment variable cudacap reads, one row each
 * (src/common/options.c). The parser (cap/config.c), the log level (common/log.c),
 * the HAMi names cudacap ignores (hook/init.c) and the table in
 * docs/configuration.md (printed by common/options_doc.c) all work from it. */
#ifndef CC_OPTIONS_H
#define CC_OPTIONS_H

#include <stdint.h>

typedef enum {
    CC_KIND_SIZE,    /* bytes, or a number with a binary unit (cc_parse_size) */
    CC_KIND_PERCENT, /* 0..100, optionally with % (cc_parse_percent) */
    CC_KIND_SWITCH,  /* 1/0, true/false, yes/no, on/off (cc_parse_bool) */
    CC_KIND_ENUM,    /* one of .choices, in any case */
    CC_KIND_PATH,    /* a path, taken as it is */
    CC_KIND_LEVEL,   /* a log level 0..4 */
    CC_KIND_IGNORED, /* a HAMi name with no use here: a warning when set */
    CC_KIND_TEXT,    /* any text, read by its own module (no default) */
    CC_KIND_MS,      /* milliseconds 1..1000, optionally ending in "ms" */
    CC_KIND_RATIO,   /* a decimal number >= 1 (at most 3 decimals), stored x 1000 */
} cc_opt_kind_t;

typedef struct {
    const char *word;
    int value;
} cc_opt_choice_t;

typedef struct cc_option {
    const char *name;       /* the CUDACAP_* name; NULL: only the alias */
    const char *alias;      /* the HAMi/Volcano (or seed's) name; NULL: none */
    const char *alias_note; /* doc: said after the alias; NULL: nothing */
    /* The seed system's (vgpu-manager's) name; NULL: none. Its NAME_<i>
     * index is the device's place in MANAGER_VISIBLE_DEVICES where that is
     * set (cap/config.c). */
    const char *seed;
    /* Appended to a value that came from the alias (a path option whose
     * alias names a file: the folder is beside it); NULL: nothing. */
    const char *alias_suffix;
    cc_opt_kind_t kind;
    int per_device;           /* also NAME_<i> and ALIAS_<i>, i < CC_MAX_DEVICES */
    uint64_t def;             /* unset or bad: bytes, percent, 0/1, enum value, level */
    const char *def_path;     /* PATH: the default path */
    const char *def_note;     /* doc: said after the default; NULL: nothing */
    const cc_opt_choice_t *choices; /* ENUM: the words, ended by a NULL word */
    const char *const *quiet; /* IGNORED: values that ask for nothing (exact; NULL-ended) */
    const char *bad;          /* a bad value's message ends with this; IGNORED: why ignored */
    const char *doc;          /* doc: the meaning */
    const char *doc_dev;      /* doc: the meaning of the NAME_<i> row (per_device) */
} cc_option_t;

/* Rows, in the order of the doc's table (and of the messages: config.c loads
 * them in this order). */
enum {
    CC_OPT_MEM_LIMIT,
    CC_OPT_MEM_OVERSUBSCRIBE,
    CC_OPT_MEM_RATIO,
    CC_OPT_MEM_OVERSOLD,
    CC_OPT_SM_LIMIT,
    CC_OPT_SM_SOFT_LIMIT,
    CC_OPT_SM_BURST,
    CC_OPT_STATE_DIR,
    CC_OPT_CONTROLLER,
    CC_OPT_LOG_LEVEL,
    CC_OPT_COUNT_CALLS,
    CC_OPT_SHARED_BUCKET,
    CC_OPT_CTX_OVERHEAD,
    CC_OPT_CORE_POLICY,
    CC_OPT_TASK_PRIORITY,
    CC_OPT_OVERSUBSCRIBE,
    CC_OPT_SEED_DEVICES,
    CC_OPT_STRICT,
    CC_OPT_TEST_FAULT,
    CC_OPT_TEST_FAULT_COUNT,
    CC_OPT_COUNT
};

extern const cc_option_t cc_options[CC_OPT_COUNT];

/* One option's value as the environment gives it. */
typedef struct {
    const char *value; /* NULL: none of its names is set (non-empty) */
    char name[64];     /* the name it came from */
    int from_alias; /* 0: the CUDACAP_* name, 1: the alias, 2: the seed's name */
    /* Both names set, to different values: the alias' one, overridden. */
    const char *shadowed;
    char shadowed_name[64];
} cc_opt_value_t;

/* Reads o (dev >= 0: its NAME_<dev> forms, for a per-device option; -1: the
 * all-devices names) through get: the CUDACAP_* name wins over the alias,
 * the alias over the seed's name. */
void cc_opt_get(const cc_option_t *o, int dev, const char *(*get)(const char *),
                cc_opt_value_t *out);
/* The same, the seed's name read at index seed_dev (-1 with dev >= 0: not
 * read at all, the device has no place in MANAGER_VISIBLE_DEVICES). */
void cc_opt_get_seed(const cc_option_t *o, int dev, int seed_dev,
                     const char *(*get)(const char *), cc_opt_value_t *out);

/* Warns that the alias' differing value is overridden (nothing if it is not). */
void cc_opt_say_shadowed(const cc_opt_value_t *v);

/* The name NAME_<dev> of o (alias 1: of its alias, 2: of the seed's name)
 * in buf; NULL where o has no such name. */
const char *cc_opt_name(const cc_option_t *o, int alias, int dev, char *buf, unsigned size);

/* Parses s as o's kind (common/opt_value.c): 0 and *out set, or -1 (not of the
 * kind), CC_SIZE_TOO_LARGE or CC_SIZE_BELOW_BYTE. */
int cc_opt_parse(const cc_option_t *o, const char *s, uint64_t *out);

/* Says on stderr that name="v" did not parse as o's kind (rc from
 * cc_opt_parse), ending with tail: what the process does instead. */
void cc_opt_report(const cc_option_t *o, const char *name, const char *v, int rc, const char *tail);

#endif
