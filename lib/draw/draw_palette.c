/* The colours of the pictures (docs/draw.md lists them).
 *
 * Tasks: eight hues (blue, orange, red, teal, green, yellow, purple, navy)
 * whose greys are 25 apart or more (Rec. 601 luma 37 to 224), so that a
 * greyscale print or a colour-blind reader still tells any two of the
 * first eight tasks apart; tasks 8 and up take the same colours with a
 * pattern over them (stripes, dots: ngi_draw_task_pattern), and
 * every cell carries its task number. Heat: a light-to-dark sequence
 * (ColorBrewer YlOrRd), which stays ordered in greyscale; the mark of an
 * oversubscribed core is blue, a hue no heat level has. */
#include "private/draw.h"

/* Luma (0.299 R + 0.587 G + 0.114 B) in the comments. */
static const ngi_rgb task_rgb[NGI_TASK_COLOURS] = {
    {0x21, 0x66, 0xac}, /* blue, 89 */
    {0xfb, 0x9a, 0x29}, /* orange, 170 */
    {0xa5, 0x0f, 0x15}, /* dark red, 60 */
    {0x99, 0xdc, 0xd4}, /* light teal, 199 */
    {0x4a, 0x95, 0x3a}, /* green, 116 */
    {0xfb, 0xe8, 0x70}, /* light yellow, 224 */
    {0xb0, 0x7a, 0xa1}, /* purple, 143 */
    {0x1b, 0x24, 0x48}, /* navy, 37 */
};

static const ngi_rgb heat_rgb[NGI_HEAT_LEVELS] = {
    {0xff, 0xff, 0xff}, {0xff, 0xed, 0xa0}, {0xfe, 0xb2, 0x4c},
    {0xfc, 0x4e, 0x2a}, {0xbd, 0x00, 0x26}, {0x6b, 0x00, 0x1a},
};

static const ngi_rgb fixed_rgb[NGI_C_COUNT] = {
    [NGI_C_FREE] = {0xe8, 0xe8, 0xe8},
    [NGI_C_IDLE] = {0xb4, 0xb4, 0xb4},
    [NGI_C_DIM] = {0xf6, 0xf6, 0xf6},
    [NGI_C_SHARED] = {0xff, 0xff, 0xff},
    [NGI_C_DRAM] = {0xd6, 0xe4, 0xf2},
    [NGI_C_HBM] = {0xfb, 0xe0, 0xc0},
    [NGI_C_GPUMEM] = {0xe2, 0xd8, 0xee},
    [NGI_C_NVM] = {0xdc, 0xec, 0xd6},
    [NGI_C_CXL] = {0xd4, 0xee, 0xf0},
    [NGI_C_UNKNOWN] = {0xea, 0xea, 0xea},
    [NGI_C_DEVICE] = {0xf2, 0xf2, 0xf2},
};

ngi_rgb ngi_draw_task_rgb(unsigned task)
{
    return task_rgb[task % NGI_TASK_COLOURS];
}

unsigned ngi_draw_task_pattern(unsigned task)
{
    return (task / NGI_TASK_COLOURS) % NGI_TASK_PATTERNS;
}

ngi_rgb ngi_draw_over_rgb(void)
{
    return (ngi_rgb){0x1f, 0x3f, 0xff};
}

ngi_rgb ngi_draw_heat_rgb(unsigned runnable)
{
    return heat_rgb[runnable < NGI_HEAT_LEVELS ? runnable : NGI_HEAT_LEVELS - 1];
}

ngi_rgb ngi_draw_rgb(ngi_colour c)
{
    return fixed_rgb[(unsigned)c < NGI_C_COUNT ? c : NGI_C_UNKNOWN];
}

ngi_rgb ngi_draw_kind_rgb(ng_mem_kind kind)
{
    switch (kind) {
    case NG_MEM_DRAM: return fixed_rgb[NGI_C_DRAM];
    case NG_MEM_HBM: return fixed_rgb[NGI_C_HBM];
    case NG_MEM_GPU: return fixed_rgb[NGI_C_GPUMEM];
    case NG_MEM_NVM: return fixed_rgb[NGI_C_NVM];
    case NG_MEM_CXL: return fixed_rgb[NGI_C_CXL];
    default: return fixed_rgb[NGI_C_UNKNOWN];
    }
}

void ngi_draw_hex(ngi_rgb c, char out[8])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char v[3] = {c.r, c.g, c.b};
    out[0] = '#';
    for (int i = 0; i < 3; i++) {
        out[1 + 2 * i] = digits[v[i] >> 4];
        out[2 + 2 * i] = digits[v[i] & 15];
    }
    out[7] = '\0';
}

/* Relative luminance (sRGB, linearised), as WCAG defines it, in [0, 1]. */
static double luminance(ngi_rgb c)
{
    double ch[3] = {c.r / 255.0, c.g / 255.0, c.b / 255.0};
    for (int i = 0; i < 3; i++) {
        double x = ch[i];
        /* (x + 0.055) / 1.055 squared and a bit: gamma 2.4 without pow(). */
        ch[i] = x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) * ((x + 0.055) / 1.055) *
                                              (0.6 + 0.4 * ((x + 0.055) / 1.055));
    }
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

/* White text when its contrast ratio beats black's: (1.05)/(L+0.05)
 * against (L+0.05)/0.05, equal at L ~ 0.18. */
int ngi_draw_dark(ngi_rgb c)
{
    return luminance(c) < 0.18;
}

static unsigned cube_level(unsigned char v)
{
    /* xterm's cube steps: 0, 95, 135, 175, 215, 255. */
    return v < 48 ? 0 : v < 115 ? 1 : (unsigned)(v - 35) / 40;
}

static unsigned cube_value(unsigned level)
{
    return level ? 55 + 40 * level : 0;
}

static unsigned dist2(ngi_rgb c, unsigned r, unsigned g, unsigned b)
{
    int dr = c.r - (int)r, dg = c.g - (int)g, db = c.b - (int)b;
    return (unsigned)(dr * dr + dg * dg + db * db);
}

unsigned ngi_draw_ansi256(ngi_rgb c)
{
    unsigned r = cube_level(c.r), g = cube_level(c.g), b = cube_level(c.b);
    unsigned cube = 16 + 36 * r + 6 * g + b;
    unsigned dc = dist2(c, cube_value(r), cube_value(g), cube_value(b));
    /* The grey ramp 232..255: 8, 18, ..., 238. */
    unsigned avg = ((unsigned)c.r + c.g + c.b) / 3;
    unsigned step = avg < 8 ? 0 : (avg - 8) / 10 > 23 ? 23 : (avg - 8) / 10;
    unsigned grey = 8 + 10 * step;
    return dist2(c, grey, grey, grey) < dc ? 232 + step : cube;
}
