/* dump: -t, every event as one whole text line on stdout (dump.h). */
#include "dump.h"

#include "supervise.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#define DUMP_FLUSH_AT (64u << 10)

/* Lines are formatted into a memory stream and passed on in whole lines only, so that a crash
 * or a failure never leaves half a line on stdout. */
static struct {
    FILE *memory, *final; /* Owned by this; borrowed */
    char *data;
    size_t size;
    bool failed;
} lines;

FILE *zm_dump_begin(FILE *final)
{
    lines.final = final;
    lines.failed = false;
    lines.memory = open_memstream(&lines.data, &lines.size);
    return lines.memory;
}

static void pass_on(void)
{
    if (fflush(lines.memory) != 0)
        lines.failed = true;
    if (lines.size == 0)
        return;
    zm_supervise_output_started();
    zm_supervise_output_wait(1);
    if (fwrite(lines.data, 1, lines.size, lines.final) != lines.size || fflush(lines.final) != 0)
        lines.failed = true;
    zm_supervise_output_wait(0);
    rewind(lines.memory);
}

int zm_dump_end(void)
{
    if (!lines.memory)
        return -1;
    pass_on();
    fclose(lines.memory);
    free(lines.data);
    lines.memory = NULL;
    lines.data = NULL;
    lines.size = 0;
    return lines.failed ? -1 : 0;
}

/* Quoted, with control characters escaped: one event stays one line. */
static void print_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\x%02x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static void print_field(FILE *out, const bt_field *field)
{
    bt_field_class_type type = bt_field_get_class_type(field);
    if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
        fprintf(out, "%" PRId64, bt_field_integer_signed_get_value(field));
    } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
        const bt_field_class *field_class = bt_field_borrow_class_const(field);
        uint64_t value = bt_field_integer_unsigned_get_value(field);
        if (bt_field_class_integer_get_preferred_display_base(field_class) ==
            BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL)
            fprintf(out, "0x%" PRIx64, value);
        else
            fprintf(out, "%" PRIu64, value);
    } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_REAL)) {
        fprintf(out, "%g", bt_field_real_double_precision_get_value(field));
    } else if (type == BT_FIELD_CLASS_TYPE_STRING) {
        print_string(out, bt_field_string_get_value(field));
    } else if (type == BT_FIELD_CLASS_TYPE_BOOL) {
        fputs(bt_field_bool_get_value(field) ? "true" : "false", out);
    } else if (type == BT_FIELD_CLASS_TYPE_STRUCTURE) {
        const bt_field_class *field_class = bt_field_borrow_class_const(field);
        uint64_t count = bt_field_class_structure_get_member_count(field_class);
        fputs("{ ", out);
        for (uint64_t i = 0; i < count; i++) {
            const bt_field_class_structure_member *member =
                bt_field_class_structure_borrow_member_by_index_const(field_class, i);
            fprintf(out, "%s%s = ", i ? ", " : "",
                    bt_field_class_structure_member_get_name(member));
            print_field(out, bt_field_structure_borrow_member_field_by_index_const(field, i));
        }
        fputs(" }", out);
    } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY)) {
        uint64_t length = bt_field_array_get_length(field);
        fputs("[ ", out);
        for (uint64_t i = 0; i < length; i++) {
            if (i)
                fputs(", ", out);
            print_field(out, bt_field_array_borrow_element_field_by_index_const(field, i));
        }
        fputs(" ]", out);
    } else {
        fputs("?", out);
    }
}

void zm_dump_event(FILE *out, const char *hostname, int64_t ns, const bt_event *event,
                   const int64_t *start_ns)
{
    const char *name = bt_event_class_get_name(bt_event_borrow_class_const(event));
    fprintf(out, "%" PRId64 " %s %s", ns, hostname, name ? name : "?");
    const bt_field *context = bt_event_borrow_common_context_field_const(event);
    if (context) {
        fputc(' ', out);
        print_field(out, context);
    }
    const bt_field *payload = bt_event_borrow_payload_field_const(event);
    if (payload) {
        fputc(' ', out);
        print_field(out, payload);
    }
    if (start_ns)
        fprintf(out, " start_ns=%" PRId64, *start_ns);
    fputc('\n', out);
    if (out == lines.memory && ftell(out) >= (long)DUMP_FLUSH_AT)
        pass_on();
}
