/*
 * .npy files: round trips of every dtype through memory and files, the exact bytes of a
 * header against the format specification and numpy's own output, atomic writes, raw
 * binary input, and one test per way a file can be malformed.
 */
#include "sim/data/npy.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- helpers ---------------------------------------------------------------------------- */

static char dir[256];

static void make_dir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/npuscope-npy-XXXXXX", base && *base ? base : P_tmpdir);
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char p[512];
    while (dp && (e = readdir(dp))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (dp)
        closedir(dp);
    rmdir(dir);
}

static const char *in_dir(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static void put_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static size_t count_files(void)
{
    size_t n = 0;
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (dp && (e = readdir(dp)))
        n += e->d_name[0] != '.';
    closedir(dp);
    return n;
}

/* A .npy image: magic, version major.0, the header text as given (no padding added), data. */
static size_t build(unsigned char *out, unsigned major, const char *header, const void *data,
                    size_t ndata)
{
    size_t hl = strlen(header), off;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    if (major == 1) {
        out[8] = (unsigned char)(hl & 0xff);
        out[9] = (unsigned char)(hl >> 8);
        off = 10;
    } else {
        for (int i = 0; i < 4; i++)
            out[8 + i] = (unsigned char)(hl >> (8 * i));
        off = 12;
    }
    memcpy(out + off, header, hl);
    if (ndata)
        memcpy(out + off + hl, data, ndata);
    return off + hl + ndata;
}

static unsigned char img[8192];
static char msg[1024];

/* Read a v1.0 image of header and ndata zero bytes; the formatted diag goes to msg. */
static int read_header(const char *header, size_t ndata, struct sim_tensor **t)
{
    static const unsigned char zeros[256];
    cr_assert(ndata <= sizeof(zeros));
    size_t n = build(img, 1, header, zeros, ndata);
    struct diag d;
    diag_clear(&d);
    msg[0] = '\0';
    int r = sim_npy_read_mem(img, n, "x.npy", t, &d);
    if (r < 0)
        diag_format(&d, msg, sizeof(msg));
    return r;
}

#define HDR(descr, shape) "{'descr': '" descr "', 'fortran_order': False, 'shape': " shape ", }"

/* --- the bytes of a header -------------------------------------------------------------- */

Test(npy, header_bytes_follow_the_format_specification)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 2, (int64_t[]){2, 3});
    for (size_t i = 0; i < 6; i++)
        sim_tensor_set(t, i, (double)i);
    size_t n;
    unsigned char *b = sim_npy_write_mem(t, &n);

    /* magic \x93NUMPY, version 1.0, then the header length as a little-endian uint16 */
    cr_assert_eq(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);
    size_t hlen = b[8] | (size_t)b[9] << 8;
    /* magic + version + length + header is a multiple of 64 (the spec's alignment) */
    cr_assert_eq((10 + hlen) % 64, 0, "total header %zu", 10 + hlen);
    /* the dict is a Python literal with the keys sorted, as numpy writes it */
    static const char dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    cr_assert_eq(memcmp(b + 10, dict, sizeof(dict) - 1), 0);
    /* then spaces, and a newline as the very last header byte */
    for (size_t i = 10 + sizeof(dict) - 1; i < 10 + hlen - 1; i++)
        cr_assert_eq(b[i], ' ', "byte %zu", i);
    cr_assert_eq(b[10 + hlen - 1], '\n');
    /* 10 + 59 + 1 = 70 bytes round up to 128: length field 118 = 0x76 */
    cr_assert_eq(hlen, 118);
    cr_assert_eq(b[8], 0x76);
    cr_assert_eq(b[9], 0x00);
    /* then the data, C order, little-endian: 0.0f 1.0f ... 5.0f */
    cr_assert_eq(n, 128 + 24);
    static const unsigned char data[24] = {0, 0, 0,    0,    0, 0, 0x80, 0x3f, 0, 0, 0,    0x40,
                                           0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40};
    cr_assert_eq(memcmp(b + 128, data, 24), 0);
    free(b);
    sim_tensor_unref(t);
}

/* What np.save (numpy 1.24) writes: every header is 128 bytes, the dict padded with spaces
 * to a final newline. These were checked against numpy's output byte for byte. */
static void check_numpy_bytes(const struct sim_tensor *t, const char *dict, const void *data)
{
    unsigned char want[256];
    memcpy(want, "\x93NUMPY\x01\x00\x76\x00", 10);
    size_t dl = strlen(dict);
    memcpy(want + 10, dict, dl);
    memset(want + 10 + dl, ' ', 117 - dl);
    want[127] = '\n';
    memcpy(want + 128, data, t->nbytes);
    size_t n;
    unsigned char *b = sim_npy_write_mem(t, &n);
    cr_assert_eq(n, 128 + t->nbytes, "%s", dict);
    cr_assert_eq(memcmp(b, want, n), 0, "%s", dict);
    free(b);
}

Test(npy, written_files_equal_what_numpy_writes)
{
    struct sim_tensor *t = sim_tensor_new(SIM_I8, 0, NULL);
    *(int8_t *)sim_tensor_data(t) = -5;
    check_numpy_bytes(t, HDR("|i1", "()"), "\xfb");
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_BOOL, 1, (int64_t[]){3});
    memcpy(sim_tensor_data(t), "\x01\x00\x01", 3);
    check_numpy_bytes(t, HDR("|b1", "(3,)"), "\x01\x00\x01");
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_F16, 1, (int64_t[]){2});
    sim_tensor_set(t, 0, 1.5);
    sim_tensor_set(t, 1, -2.0);
    check_numpy_bytes(t, HDR("<f2", "(2,)"), "\x00\x3e\x00\xc0");
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_U16, 2, (int64_t[]){2, 2});
    memcpy(sim_tensor_data(t), "\x01\x00\x02\x00\x03\x00\xff\xff", 8);
    check_numpy_bytes(t, HDR("<u2", "(2, 2)"), "\x01\x00\x02\x00\x03\x00\xff\xff");
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I64, 2, (int64_t[]){0, 3});
    check_numpy_bytes(t, HDR("<i8", "(0, 3)"), "");
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_U8, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1});
    check_numpy_bytes(t, HDR("|u1", "(1, 1, 1, 1, 1, 1, 1, 1)"), "\x00");
    sim_tensor_unref(t);
}

/* --- round trips ------------------------------------------------------------------------ */

/* A tensor of dtype with varied, non-trivial bytes. */
static struct sim_tensor *pattern(enum sim_dtype dtype)
{
    struct sim_tensor *t = sim_tensor_new(dtype, 3, (int64_t[]){2, 3, 5});
    unsigned char *p = sim_tensor_data(t);
    for (size_t i = 0; i < t->nbytes; i++)
        p[i] = (unsigned char)(i * 37 + 11);
    if (dtype == SIM_BOOL)
        for (size_t i = 0; i < t->nbytes; i++)
            p[i] &= 1;
    return t;
}

Test(npy, every_dtype_round_trips_through_memory)
{
    for (unsigned k = 0; k < SIM_DTYPE_COUNT; k++) {
        enum sim_dtype dt = (enum sim_dtype)k;
        struct sim_tensor *t = pattern(dt), *back = NULL;
        size_t n;
        void *b = sim_npy_write_mem(t, &n);
        struct diag d;
        cr_assert_eq(sim_npy_read_mem(b, n, NULL, &back, &d), 0, "%s: %s", sim_dtype_name(dt),
                     d.msg);
        /* bf16 has no numpy dtype: it travels as its raw bits, '<u2' */
        cr_assert_eq(back->dtype, dt == SIM_BF16 ? SIM_U16 : dt, "%s", sim_dtype_name(dt));
        cr_assert_eq(back->ndim, 3);
        cr_assert_eq(back->shape[0], 2);
        cr_assert_eq(back->shape[1], 3);
        cr_assert_eq(back->shape[2], 5);
        cr_assert_eq(back->nbytes, t->nbytes);
        cr_assert_eq(memcmp(sim_tensor_cdata(back), sim_tensor_cdata(t), t->nbytes), 0, "%s",
                     sim_dtype_name(dt));
        cr_assert_eq(back->refs, 1);
        free(b);
        sim_tensor_unref(back);
        sim_tensor_unref(t);
    }
}

Test(npy, every_dtype_round_trips_through_a_file, .init = make_dir, .fini = remove_dir)
{
    for (unsigned k = 0; k < SIM_DTYPE_COUNT; k++) {
        enum sim_dtype dt = (enum sim_dtype)k;
        struct sim_tensor *t = pattern(dt), *back = NULL;
        struct diag d;
        const char *p = in_dir("t.npy");
        cr_assert_eq(sim_npy_write(p, t, &d), 0, "%s", d.msg);
        cr_assert_eq(sim_npy_read(p, &back, &d), 0, "%s: %s", sim_dtype_name(dt), d.msg);
        cr_assert_eq(back->dtype, dt == SIM_BF16 ? SIM_U16 : dt);
        cr_assert_eq(back->nbytes, t->nbytes);
        cr_assert_eq(memcmp(sim_tensor_cdata(back), sim_tensor_cdata(t), t->nbytes), 0, "%s",
                     sim_dtype_name(dt));
        sim_tensor_unref(back);
        sim_tensor_unref(t);
    }
}

Test(npy, bf16_reads_back_as_its_bits)
{
    struct sim_tensor *t = sim_tensor_new(SIM_BF16, 1, (int64_t[]){2});
    sim_tensor_set(t, 0, 1.0);
    sim_tensor_set(t, 1, -3.5);
    size_t n;
    void *b = sim_npy_write_mem(t, &n);
    cr_assert(memmem(b, n, "'descr': '<u2'", 14), "bf16 is written as '<u2'");
    struct sim_tensor *u;
    cr_assert_eq(sim_npy_read_mem(b, n, NULL, &u, NULL), 0);
    struct sim_tensor *v = sim_tensor_view(u, SIM_BF16, u->ndim, u->shape, NULL);
    cr_assert_eq(sim_tensor_get(v, 0), 1.0);
    cr_assert_eq(sim_tensor_get(v, 1), -3.5);
    sim_tensor_unref(v);
    sim_tensor_unref(u);
    free(b);
    sim_tensor_unref(t);
}

Test(npy, scalar_and_empty_round_trip)
{
    struct sim_tensor *s = sim_tensor_new(SIM_F32, 0, NULL), *e = NULL, *back;
    sim_tensor_set(s, 0, 2.5);
    size_t n;
    void *b = sim_npy_write_mem(s, &n);
    cr_assert_eq(sim_npy_read_mem(b, n, NULL, &back, NULL), 0);
    cr_assert_eq(back->ndim, 0);
    cr_assert_eq(sim_tensor_get(back, 0), 2.5);
    sim_tensor_unref(back);
    free(b);
    e = sim_tensor_new(SIM_I32, 2, (int64_t[]){4, 0});
    b = sim_npy_write_mem(e, &n);
    cr_assert_eq(sim_npy_read_mem(b, n, NULL, &back, NULL), 0);
    cr_assert_eq(back->ndim, 2);
    cr_assert_eq(back->shape[0], 4);
    cr_assert_eq(back->shape[1], 0);
    cr_assert_eq(back->nbytes, 0);
    sim_tensor_unref(back);
    free(b);
    sim_tensor_unref(s);
    sim_tensor_unref(e);
}

/* --- what other writers produce --------------------------------------------------------- */

Test(npy, reads_version_2_0)
{
    /* np.lib.format.write_array(f, np.array([7, -8], dtype='<i4'), version=(2, 0)) */
    unsigned char b[256];
    char hdr[117];
    snprintf(hdr, sizeof(hdr), "%-115s\n", HDR("<i4", "(2,)"));
    size_t n = build(b, 2, hdr, "\x07\x00\x00\x00\xf8\xff\xff\xff", 8);
    cr_assert_eq(n, 128 + 8);
    cr_assert_eq(b[8], 0x74);
    struct sim_tensor *t;
    struct diag d;
    cr_assert_eq(sim_npy_read_mem(b, n, NULL, &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t->dtype, SIM_I32);
    cr_assert_eq(sim_tensor_get(t, 0), 7.0);
    cr_assert_eq(sim_tensor_get(t, 1), -8.0);
    sim_tensor_unref(t);
}

Test(npy, accepts_the_variations_of_the_dict_literal)
{
    static const struct {
        const char *header;
        enum sim_dtype dtype;
        unsigned ndim;
        int64_t d0, d1;
    } ok[] = {
        /* other key order, double quotes, no trailing comma, no padding, no newline */
        {"{\"shape\": (2, 3), \"descr\": \"<i2\", \"fortran_order\": False}", SIM_I16, 2, 2, 3},
        /* whitespace anywhere Python allows it, tabs and newlines included */
        {"  { 'descr' :'<u4' ,\n\t'fortran_order':False,'shape':( 2 ,3 , ) }  \n", SIM_U32, 2, 2,
         3},
        /* Python 2 long integers */
        {HDR("<f4", "(2L, 3L)"), SIM_F32, 2, 2, 3},
        /* one-byte types with either byte-order mark */
        {HDR("<i1", "(6,)"), SIM_I8, 1, 6, 0},
        {HDR("|i1", "(6,)"), SIM_I8, 1, 6, 0},
        {HDR("<u1", "(6,)"), SIM_U8, 1, 6, 0},
        {HDR("<b1", "(6,)"), SIM_BOOL, 1, 6, 0},
        {HDR("<i8", "(0,)"), SIM_I64, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct sim_tensor *t = NULL;
        size_t n = ok[i].d0 * (ok[i].d1 ? ok[i].d1 : 1) * sim_dtype_size(ok[i].dtype);
        cr_assert_eq(read_header(ok[i].header, n, &t), 0, "%s: %s", ok[i].header, msg);
        cr_assert_eq(t->dtype, ok[i].dtype, "%s", ok[i].header);
        cr_assert_eq(t->ndim, ok[i].ndim, "%s", ok[i].header);
        cr_assert_eq(t->shape[0], ok[i].d0, "%s", ok[i].header);
        if (ok[i].ndim > 1)
            cr_assert_eq(t->shape[1], ok[i].d1, "%s", ok[i].header);
        sim_tensor_unref(t);
    }
}

/* --- malformed files -------------------------------------------------------------------- */

/* Expect a failure with code, a message starting "x.npy: bad .npy header: " (or data) and
 * containing what, on one line. */
static void expect_bad(int r, int code, const char *kind, const char *what, const char *label)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "x.npy: bad .npy %s: ", kind);
    cr_assert_eq(r, code, "%s: got %d (%s)", label, r, msg);
    cr_assert_eq(strncmp(msg, prefix, strlen(prefix)), 0, "%s: %s", label, msg);
    cr_assert(strstr(msg, what), "%s: '%s' not in: %s", label, what, msg);
    cr_assert_null(strchr(msg, '\n'), "one line: %s", msg);
}

static int read_bytes(const void *b, size_t n, struct sim_tensor **t)
{
    struct diag d;
    diag_clear(&d);
    msg[0] = '\0';
    int r = sim_npy_read_mem(b, n, "x.npy", t, &d);
    if (r < 0)
        diag_format(&d, msg, sizeof(msg));
    return r;
}

Test(npy, bad_preambles)
{
    struct sim_tensor *t = (struct sim_tensor *)0x1;
    expect_bad(read_bytes("", 0, &t), -SIM_EPARSE, "header", "not a .npy file", "empty");
    expect_bad(read_bytes("\x93NUMPX\x01\x00\x00\x00", 10, &t), -SIM_EPARSE, "header",
               "not a .npy file", "magic");
    expect_bad(read_bytes("PK\x03\x04", 4, &t), -SIM_EPARSE, "header", "not a .npy file",
               "a zip (.npz)");
    expect_bad(read_bytes("\x93NUMPY", 6, &t), -SIM_EPARSE, "header", "inside the format version",
               "no version");
    expect_bad(read_bytes("\x93NUMPY\x01", 7, &t), -SIM_EPARSE, "header",
               "inside the format version", "half a version");
    expect_bad(read_bytes("\x93NUMPY\x01\x00\x10", 9, &t), -SIM_EPARSE, "header",
               "inside the header length", "half a length");
    expect_bad(read_bytes("\x93NUMPY\x02\x00\x10\x00\x00", 11, &t), -SIM_EPARSE, "header",
               "inside the header length", "v2 with 3 length bytes");
    expect_bad(read_bytes("\x93NUMPY\x03\x00\x00\x00\x00\x00", 12, &t), -SIM_EINVAL, "header",
               "unsupported format version 3.0", "version 3.0");
    expect_bad(read_bytes("\x93NUMPY\x01\x01\x00\x00", 10, &t), -SIM_EINVAL, "header",
               "unsupported format version 1.1", "version 1.1");
    expect_bad(read_bytes("\x93NUMPY\x01\x00\xff\x00{}", 12, &t), -SIM_EPARSE, "header",
               "header length 255 runs past the end of the file (2 bytes after", "long length");
    expect_bad(read_bytes("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, &t), -SIM_EPARSE, "header",
               "header length 4294967295 runs past the end", "huge v2 length");
    cr_assert_eq(t, (struct sim_tensor *)0x1, "out is untouched on error");
}

Test(npy, bad_dict_syntax)
{
    static const struct {
        const char *header;
        const char *what;
    } cases[] = {
        {"", "byte 10: expected '{' at the start of the header dict, found the end"},
        {"   \n", "expected '{'"},
        {"[1, 2]", "byte 10: expected '{' at the start of the header dict, found '['"},
        {"{descr: '<f4'}", "byte 11: expected a key (a quoted string), found 'd'"},
        {"{'descr: '<f4'}", "byte 11: unexpected key 'descr: '"},
        {"{'descr' '<f4'}", "expected ':' after a key, found '''"},
        {"{'descr': '<f4}", "byte 20: unterminated string"},
        {"{'descr': '<f4'", "expected ',' or '}' after a value, found the end of the header"},
        {"{'descr': '<f4' 'shape': ()}", "expected ',' or '}' after a value, found '''"},
        {"{'descr': '<f4',, 'shape': ()}", "expected a key (a quoted string), found ','"},
        {"{,}", "expected a key"},
        {HDR("<f4", "(2, 3)") " x", "unexpected 'x' after the header dict"},
        {HDR("<f4", "(2, 3)") "}", "unexpected '}' after the header dict"},
        {"{'descr': 'a\\x', 'fortran_order': False, 'shape': ()}",
         "unsupported character 0x5c in a string"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
         "unexpected key 'x' (expected descr, fortran_order, shape)"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
         "duplicate key 'descr'"},
        {"{}", "missing key 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
        {"{'descr': '<f4', 'shape': ()}", "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}",
         "fortran_order must be True or False"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}",
         "fortran_order must be True or False"},
        {"{'descr': '<f4', 'fortran_order': false, 'shape': ()}",
         "fortran_order must be True or False"},
        {"{'descr': 4, 'fortran_order': False, 'shape': ()}",
         "expected descr (a quoted string), found '4'"},
        {HDR("<f4", "[2, 3]"), "shape must be a tuple, not a list"},
        {HDR("<f4", "5"), "expected '(' to open the shape tuple, found '5'"},
        {HDR("<f4", "(5)"), "shape (5) is a number, not a tuple: a 1-d shape is written (5,)"},
        {HDR("<f4", "(2, 3"), "expected a dimension (an integer) in shape, found '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}",
         "expected ',' or ')' in shape, found '}'"},
        {HDR("<f4", "(2 3)"), "expected ',' or ')' in shape, found '3'"},
        {HDR("<f4", "(2.5,)"), "expected ',' or ')' in shape, found '.'"},
        {HDR("<f4", "(2,,)"), "expected a dimension (an integer) in shape, found ','"},
        {HDR("<f4", "(,)"), "expected a dimension"},
        {HDR("<f4", "(0x10,)"), "expected ',' or ')' in shape, found 'x'"},
        {HDR("<f4", "(02,)"), "an integer cannot start with 0"},
        {HDR("<f4", "(True,)"), "expected a dimension (an integer) in shape, found 'T'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sim_tensor *t = NULL;
        expect_bad(read_header(cases[i].header, 0, &t), -SIM_EPARSE, "header", cases[i].what,
                   cases[i].header);
        cr_assert_null(t);
    }
}

Test(npy, valid_headers_npuscope_cannot_use)
{
    static const struct {
        const char *header;
        const char *what;
    } cases[] = {
        {HDR("<f8", "(2,)"), "unsupported dtype '<f8' (npuscope reads <f4 <f2 |i1"},
        {HDR("<c8", "(2,)"), "unsupported dtype '<c8'"},
        {HDR("|O", "(2,)"), "unsupported dtype '|O'"},
        {HDR("<U10", "(2,)"), "unsupported dtype '<U10'"},
        {HDR("|f4", "(2,)"), "unsupported dtype '|f4'"},
        {HDR(">f4", "(2,)"), "byte 20: big-endian dtype '>f4' is not supported"},
        {HDR(">i2", "(2,)"), "big-endian dtype '>i2' is not supported"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
         "structured dtypes are not supported"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
         "byte 44: fortran_order is True: only C-order arrays are supported"},
        {HDR("<f4", "(-1,)"), "negative dimension in shape"},
        {HDR("<f4", "(2, -3)"), "negative dimension in shape"},
        {HDR("<f4", "(9223372036854775808,)"), "dimension too large"},
        {HDR("<f4", "(99999999999999999999999,)"), "dimension too large"},
        {HDR("<f4", "(4294967296, 4294967296)"),
         "shape (4294967296, 4294967296) of f32 is too large"},
        {HDR("<f4", "(0, 4294967296, 4294967296)"), "is too large"},
        {HDR("|u1", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), "shape has more than 8 dimensions"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sim_tensor *t = NULL;
        expect_bad(read_header(cases[i].header, 8, &t), -SIM_EINVAL, "header", cases[i].what,
                   cases[i].header);
        cr_assert_null(t);
    }
}

Test(npy, data_length_must_match_the_header)
{
    struct sim_tensor *t = NULL;
    expect_bad(read_header(HDR("<f4", "(2, 3)"), 20, &t), -SIM_EINVAL, "data",
               "f32 (2, 3) needs 24 bytes after the header, the file has 20 (truncated)", "short");
    expect_bad(read_header(HDR("<f4", "(2, 3)"), 25, &t), -SIM_EINVAL, "data",
               "needs 24 bytes after the header, the file has 25 (trailing bytes)", "long");
    expect_bad(read_header(HDR("<f4", "()"), 0, &t), -SIM_EINVAL, "data", "f32 () needs 4 bytes",
               "scalar without data");
    cr_assert_null(t);
    cr_assert_eq(read_header(HDR("<f4", "(2, 3)"), 24, &t), 0);
    sim_tensor_unref(t);
}

Test(npy, hostile_header_text_never_reaches_the_terminal_raw)
{
    struct sim_tensor *t = NULL;
    /* a key made to clear the screen: rejected as a character, and the message escaped */
    read_header("{'\x1b[2J': 1}", 0, &t);
    cr_assert_null(strchr(msg, '\x1b'), "%s", msg);
    cr_assert(strstr(msg, "unsupported character 0x1b"), "%s", msg);
    read_header("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\x1b]0;x\x07", 4, &t);
    cr_assert_null(strchr(msg, '\x1b'), "%s", msg);
    cr_assert(strstr(msg, "unexpected byte 0x1b after the header dict"), "%s", msg);
    read_header("\xff\xfe", 0, &t);
    cr_assert(strstr(msg, "found byte 0xff"), "%s", msg);
    cr_assert_null(t);
}

/* --- files ------------------------------------------------------------------------------ */

Test(npy, file_errors_name_the_file, .init = make_dir, .fini = remove_dir)
{
    struct sim_tensor *t = NULL;
    struct diag d;
    char line[1024];
    const char *p = in_dir("missing.npy");
    cr_assert_eq(sim_npy_read(p, &t, &d), -SIM_EIO);
    cr_assert_str_eq(d.file, p);
    cr_assert(strstr(diag_format(&d, line, sizeof(line)), "missing.npy: cannot open: No such file"),
              "%s", line);
    cr_assert_eq(sim_npy_read(dir, &t, &d), -SIM_EIO);
    cr_assert(strstr(d.msg, "is a directory"), "%s", d.msg);

    /* a malformed file read from disk gives the same diagnostics as from memory */
    unsigned char b[256];
    size_t n = build(b, 1, HDR("<f4", "(2, 3)"), "0123456789abcdef0123", 20);
    put_file(in_dir("short.npy"), b, n);
    cr_assert_eq(sim_npy_read(in_dir("short.npy"), &t, &d), -SIM_EINVAL);
    cr_assert(strstr(diag_format(&d, line, sizeof(line)),
                     "short.npy: bad .npy data: f32 (2, 3) needs 24 bytes after the header, the "
                     "file has 20 (truncated)"),
              "%s", line);
    put_file(in_dir("liar.npy"), "\x93NUMPY\x01\x00\xff\xff{", 11);
    cr_assert_eq(sim_npy_read(in_dir("liar.npy"), &t, &d), -SIM_EPARSE);
    cr_assert(strstr(d.msg, "header length 65535 runs past the end"), "%s", d.msg);
    put_file(in_dir("empty.npy"), "", 0);
    cr_assert_eq(sim_npy_read(in_dir("empty.npy"), &t, &d), -SIM_EPARSE);
    cr_assert(strstr(d.msg, "not a .npy file"), "%s", d.msg);
    put_file(in_dir("tiny.npy"), "\x93NUM", 4);
    cr_assert_eq(sim_npy_read(in_dir("tiny.npy"), &t, &d), -SIM_EPARSE);
    cr_assert(strstr(d.msg, "not a .npy file"), "%s", d.msg);
    n = build(b, 1, HDR("<f4", "(2, 3)") " ?", "", 0);
    put_file(in_dir("junk.npy"), b, n);
    cr_assert_eq(sim_npy_read(in_dir("junk.npy"), &t, &d), -SIM_EPARSE);
    cr_assert(strstr(d.msg, "unexpected '?'"), "%s", d.msg);
    cr_assert_null(t);
}

Test(npy, reads_from_a_pipe, .init = make_dir, .fini = remove_dir)
{
    const char *p = in_dir("fifo");
    cr_assert_eq(mkfifo(p, 0600), 0);
    struct sim_tensor *t = sim_tensor_new(SIM_I32, 1, (int64_t[]){40000});
    for (size_t i = 0; i < 40000; i++)
        sim_tensor_set(t, i, (double)i * 3);
    size_t n;
    void *b = sim_npy_write_mem(t, &n); /* bigger than one read, so the stream is looped */
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(p, O_WRONLY);
        ssize_t w = fd >= 0 ? write(fd, b, n) : -1;
        _exit(w == (ssize_t)n ? 0 : 1);
    }
    struct sim_tensor *back = NULL;
    struct diag d;
    cr_assert_eq(sim_npy_read(p, &back, &d), 0, "%s", d.msg);
    int status;
    waitpid(pid, &status, 0);
    cr_assert_eq(back->nbytes, t->nbytes);
    cr_assert_eq(memcmp(sim_tensor_cdata(back), sim_tensor_cdata(t), t->nbytes), 0);
    free(b);
    sim_tensor_unref(back);
    sim_tensor_unref(t);
}

Test(npy, write_is_atomic_and_leaves_no_temporary, .init = make_dir, .fini = remove_dir)
{
    const char *p = in_dir("out.npy");
    put_file(p, "old contents", 12);
    struct sim_tensor *t = pattern(SIM_F32), *back = NULL;
    mode_t old = umask(022);
    struct diag d;
    cr_assert_eq(sim_npy_write(p, t, &d), 0, "%s", d.msg);
    umask(old);
    cr_assert_eq(count_files(), 1, "only out.npy is left");
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644, "like any new file: 0666 less the umask");
    cr_assert_eq((size_t)st.st_size, 128 + t->nbytes);
    cr_assert_eq(sim_npy_read(p, &back, &d), 0, "%s", d.msg);
    cr_assert_eq(memcmp(sim_tensor_cdata(back), sim_tensor_cdata(t), t->nbytes), 0);
    sim_tensor_unref(back);
    sim_tensor_unref(t);
}

Test(npy, failed_write_leaves_the_target_alone, .init = make_dir, .fini = remove_dir)
{
    struct sim_tensor *t = pattern(SIM_U8);
    struct diag d;
    char line[1024];
    const char *p = in_dir("no/such/dir/x.npy");
    cr_assert_eq(sim_npy_write(p, t, &d), -SIM_EIO);
    cr_assert(strstr(diag_format(&d, line, sizeof(line)), "x.npy: cannot create a temporary file "
                                                          "next to it: No such file or directory"),
              "%s", line);
    /* a directory in the way: the rename fails, the temporary file is removed */
    cr_assert_eq(mkdir(in_dir("taken.npy"), 0700), 0);
    cr_assert_eq(sim_npy_write(in_dir("taken.npy"), t, &d), -SIM_EIO);
    cr_assert(strstr(d.msg, "cannot rename the temporary file into place"), "%s", d.msg);
    cr_assert_eq(count_files(), 1, "only the directory is there");
    rmdir(in_dir("taken.npy"));
    sim_tensor_unref(t);
}

/* --- raw binary files ------------------------------------------------------------------- */

Test(npy, raw_file_reads_into_dtype_and_shape, .init = make_dir, .fini = remove_dir)
{
    float v[6] = {1, 2, 3, 4, 5, -6};
    put_file(in_dir("x.bin"), v, sizeof(v));
    struct sim_tensor *t = NULL;
    struct diag d;
    cr_assert_eq(sim_npy_read_raw(in_dir("x.bin"), SIM_F32, 2, (int64_t[]){3, 2}, &t, &d), 0, "%s",
                 d.msg);
    cr_assert_eq(t->ndim, 2);
    cr_assert_eq(t->shape[0], 3);
    cr_assert_eq(sim_tensor_get(t, 5), -6.0);
    sim_tensor_unref(t);
    /* the same bytes as another layout of 24 bytes */
    cr_assert_eq(sim_npy_read_raw(in_dir("x.bin"), SIM_U16, 1, (int64_t[]){12}, &t, &d), 0);
    cr_assert_eq(sim_tensor_get(t, 1), (double)0x3f80);
    sim_tensor_unref(t);
}

Test(npy, raw_file_size_must_match, .init = make_dir, .fini = remove_dir)
{
    put_file(in_dir("x.bin"), "0123456789", 10);
    struct sim_tensor *t = NULL;
    struct diag d;
    char line[1024];
    cr_assert_eq(sim_npy_read_raw(in_dir("x.bin"), SIM_F32, 2, (int64_t[]){2, 3}, &t, &d),
                 -SIM_EINVAL);
    cr_assert(strstr(diag_format(&d, line, sizeof(line)),
                     "x.bin: raw data has 10 bytes, f32 (2, 3) needs 24"),
              "%s", line);
    cr_assert_eq(sim_npy_read_raw(in_dir("x.bin"), SIM_U8, 1, (int64_t[]){4}, &t, &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "raw data has 10 bytes, u8 (4,) needs 4"), "%s", d.msg);
    cr_assert_eq(sim_npy_read_raw(in_dir("x.bin"), SIM_U8, 1, (int64_t[]){-10}, &t, &d),
                 -SIM_EINVAL);
    cr_assert(strstr(d.msg, "invalid shape (-10,)"), "%s", d.msg);
    cr_assert_eq(sim_npy_read_raw(in_dir("nope.bin"), SIM_U8, 1, (int64_t[]){10}, &t, &d),
                 -SIM_EIO);
    cr_assert(strstr(d.msg, "cannot open: No such file or directory"), "%s", d.msg);
    cr_assert_null(t);
}

/* A raw stream whose length is only known at its end: too short, then too long. */
static int read_raw_from_pipe(const char *bytes, size_t n, int64_t dim, struct diag *d)
{
    const char *p = in_dir("rawfifo");
    unlink(p);
    cr_assert_eq(mkfifo(p, 0600), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(p, O_WRONLY);
        ssize_t w = fd >= 0 ? write(fd, bytes, n) : -1;
        _exit(w == (ssize_t)n ? 0 : 1);
    }
    struct sim_tensor *t = NULL;
    int r = sim_npy_read_raw(p, SIM_U8, 1, &dim, &t, d);
    waitpid(pid, NULL, 0);
    if (r == 0) {
        cr_assert_eq(t->nbytes, (size_t)dim);
        cr_assert_eq(memcmp(sim_tensor_cdata(t), bytes, n), 0);
        sim_tensor_unref(t);
    }
    return r;
}

Test(npy, raw_stream_size_must_match, .init = make_dir, .fini = remove_dir)
{
    struct diag d;
    cr_assert_eq(read_raw_from_pipe("abcdef", 6, 6, &d), 0, "%s", d.msg);
    cr_assert_eq(read_raw_from_pipe("abcdef", 6, 8, &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "raw data has fewer bytes, u8 (8,) needs 8"), "%s", d.msg);
    cr_assert_eq(read_raw_from_pipe("abcdef", 6, 4, &d), -SIM_EINVAL);
    cr_assert(strstr(d.msg, "raw data has more bytes, u8 (4,) needs 4"), "%s", d.msg);
}
