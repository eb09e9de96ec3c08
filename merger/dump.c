#include "dump.h"

#include <inttypes.h>

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
}
