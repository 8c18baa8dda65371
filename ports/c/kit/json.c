/* A small strict JSON reader: RFC 8259, UTF-8 in and out, no extensions.
 * Numbers are kept as written so that 64-bit integers survive intact. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "rs_kit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
    int depth;
} reader;

enum { max_depth = 64 };

static void fail(reader *r, const char *fmt, ...) {
    if (r->err == NULL || r->err[0] != '\0') return; /* keep the first */
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "JSON at byte %zu: %s", r->i, msg);
}

static void skip_space(reader *r) {
    while (r->i < r->n) {
        char c = r->s[r->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        r->i++;
    }
}

static rs_json *node(rs_json_kind k) {
    rs_json *v = calloc(1, sizeof *v);
    if (v != NULL) v->kind = k;
    return v;
}

static bool push(rs_json *v, char *key, rs_json *item) {
    rs_json **items = realloc(v->items, (v->len + 1) * sizeof *items);
    if (items == NULL) return false;
    v->items = items;
    if (v->kind == RS_JSON_OBJECT) {
        char **keys = realloc(v->keys, (v->len + 1) * sizeof *keys);
        if (keys == NULL) return false;
        v->keys = keys;
        v->keys[v->len] = key;
    }
    v->items[v->len++] = item;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(reader *r, unsigned *out) {
    if (r->i + 4 > r->n) return false;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(r->s[r->i + (size_t)k]);
        if (h < 0) return false;
        v = v * 16 + (unsigned)h;
    }
    r->i += 4;
    *out = v;
    return true;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F)); return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* read_string reads a string starting at the opening quote. */
static char *read_string(reader *r, size_t *len) {
    r->i++; /* the quote */
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    if (out == NULL) { fail(r, "out of memory"); return NULL; }
    for (;;) {
        if (r->i >= r->n) { fail(r, "unterminated string"); free(out); return NULL; }
        if (n + 5 > cap) {
            cap *= 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) { fail(r, "out of memory"); free(out); return NULL; }
            out = grown;
        }
        unsigned char c = (unsigned char)r->s[r->i];
        if (c == '"') { r->i++; break; }
        if (c < 0x20) { fail(r, "control character in a string"); free(out); return NULL; }
        if (c != '\\') { out[n++] = (char)c; r->i++; continue; }
        r->i++;
        if (r->i >= r->n) { fail(r, "unterminated escape"); free(out); return NULL; }
        char e = r->s[r->i++];
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (!read_hex4(r, &cp)) { fail(r, "bad \\u escape"); free(out); return NULL; }
            if (cp >= 0xD800 && cp < 0xDC00) {
                unsigned lo;
                if (r->i + 2 > r->n || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u') {
                    fail(r, "lone surrogate"); free(out); return NULL;
                }
                r->i += 2;
                if (!read_hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    fail(r, "bad surrogate pair"); free(out); return NULL;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                fail(r, "lone surrogate"); free(out); return NULL;
            }
            n += put_utf8(out + n, cp);
            break;
        }
        default:
            fail(r, "bad escape \\%c", e); free(out); return NULL;
        }
    }
    out[n] = '\0';
    *len = n;
    return out;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static rs_json *read_number(reader *r) {
    size_t start = r->i;
    if (r->i < r->n && r->s[r->i] == '-') r->i++;
    if (r->i >= r->n || !is_digit(r->s[r->i])) { fail(r, "bad number"); return NULL; }
    if (r->s[r->i] == '0') r->i++;
    else while (r->i < r->n && is_digit(r->s[r->i])) r->i++;
    if (r->i < r->n && r->s[r->i] == '.') {
        r->i++;
        if (r->i >= r->n || !is_digit(r->s[r->i])) { fail(r, "bad fraction"); return NULL; }
        while (r->i < r->n && is_digit(r->s[r->i])) r->i++;
    }
    if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        r->i++;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-')) r->i++;
        if (r->i >= r->n || !is_digit(r->s[r->i])) { fail(r, "bad exponent"); return NULL; }
        while (r->i < r->n && is_digit(r->s[r->i])) r->i++;
    }
    rs_json *v = node(RS_JSON_NUMBER);
    if (v == NULL) { fail(r, "out of memory"); return NULL; }
    v->len = r->i - start;
    v->text = malloc(v->len + 1);
    if (v->text == NULL) { free(v); fail(r, "out of memory"); return NULL; }
    memcpy(v->text, r->s + start, v->len);
    v->text[v->len] = '\0';
    v->len = 0;
    return v;
}

static bool literal(reader *r, const char *word) {
    size_t k = strlen(word);
    if (r->i + k > r->n || memcmp(r->s + r->i, word, k) != 0) return false;
    r->i += k;
    return true;
}

static rs_json *read_value(reader *r);

static rs_json *read_container(reader *r, bool object) {
    if (++r->depth > max_depth) { fail(r, "nested too deep"); return NULL; }
    r->i++; /* [ or { */
    rs_json *v = node(object ? RS_JSON_OBJECT : RS_JSON_ARRAY);
    if (v == NULL) { fail(r, "out of memory"); return NULL; }
    char close = object ? '}' : ']';
    skip_space(r);
    if (r->i < r->n && r->s[r->i] == close) { r->i++; r->depth--; return v; }
    for (;;) {
        char *key = NULL;
        skip_space(r);
        if (object) {
            if (r->i >= r->n || r->s[r->i] != '"') { fail(r, "want a key"); rs_json_free(v); return NULL; }
            size_t klen;
            key = read_string(r, &klen);
            if (key == NULL) { rs_json_free(v); return NULL; }
            for (size_t k = 0; k < v->len; k++) {
                if (strcmp(v->keys[k], key) == 0) {
                    fail(r, "key \"%s\" twice", key); free(key); rs_json_free(v); return NULL;
                }
            }
            skip_space(r);
            if (r->i >= r->n || r->s[r->i] != ':') { fail(r, "want ':'"); free(key); rs_json_free(v); return NULL; }
            r->i++;
        }
        rs_json *item = read_value(r);
        if (item == NULL) { free(key); rs_json_free(v); return NULL; }
        if (!push(v, key, item)) { fail(r, "out of memory"); free(key); rs_json_free(item); rs_json_free(v); return NULL; }
        skip_space(r);
        if (r->i < r->n && r->s[r->i] == ',') { r->i++; continue; }
        if (r->i < r->n && r->s[r->i] == close) { r->i++; break; }
        fail(r, "want ',' or '%c'", close);
        rs_json_free(v);
        return NULL;
    }
    r->depth--;
    return v;
}

static rs_json *read_value(reader *r) {
    skip_space(r);
    if (r->i >= r->n) { fail(r, "unexpected end of input"); return NULL; }
    char c = r->s[r->i];
    rs_json *v;
    switch (c) {
    case '{': return read_container(r, true);
    case '[': return read_container(r, false);
    case '"': {
        v = node(RS_JSON_STRING);
        if (v == NULL) { fail(r, "out of memory"); return NULL; }
        size_t len;
        v->text = read_string(r, &len);
        if (v->text == NULL) { free(v); return NULL; }
        return v;
    }
    case 't':
    case 'f':
        v = node(RS_JSON_BOOL);
        if (v == NULL) { fail(r, "out of memory"); return NULL; }
        v->boolean = c == 't';
        if (!literal(r, v->boolean ? "true" : "false")) { free(v); fail(r, "bad literal"); return NULL; }
        return v;
    case 'n':
        if (!literal(r, "null")) { fail(r, "bad literal"); return NULL; }
        v = node(RS_JSON_NULL);
        if (v == NULL) fail(r, "out of memory");
        return v;
    default:
        return read_number(r);
    }
}

rs_json *rs_json_parse(const char *text, size_t n, char *err, size_t errlen) {
    if (err != NULL && errlen > 0) err[0] = '\0';
    reader r = {.s = text, .n = n, .err = err, .errlen = errlen};
    rs_json *v = read_value(&r);
    if (v == NULL) return NULL;
    skip_space(&r);
    if (r.i != r.n) {
        fail(&r, "text after the value");
        rs_json_free(v);
        return NULL;
    }
    return v;
}

void rs_json_free(rs_json *v) {
    if (v == NULL) return;
    for (size_t k = 0; k < v->len; k++) {
        rs_json_free(v->items[k]);
        if (v->keys != NULL) free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
    free(v);
}

const rs_json *rs_json_get(const rs_json *obj, const char *key) {
    if (obj == NULL || obj->kind != RS_JSON_OBJECT) return NULL;
    for (size_t k = 0; k < obj->len; k++) {
        if (strcmp(obj->keys[k], key) == 0) return obj->items[k];
    }
    return NULL;
}
