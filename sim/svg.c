/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim's timeline: one row per CPU, time left to right, each pixel
 * column coloured by the group that used most of it (white: idle).
 * Segments arrive in time order per CPU, so only the open column of each
 * CPU keeps per-group sums.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define SVG_COLS 1000

struct svg {
	int ncpu, ngroups;
	int64_t t0, t1, w;  /* ns per column */
	unsigned char *col; /* [cpu][SVG_COLS]: group + 1, 0 idle */
	int *open;	    /* per CPU: the column being summed, -1 none */
	int64_t *acc;	    /* [cpu][ngroups + 1] */
};

struct svg *
svg_new(int ncpu, int64_t t0, int64_t t1, int ngroups)
{
	struct svg *v = calloc(1, sizeof(*v));

	if (v == NULL)
		abort();
	v->ncpu = ncpu;
	v->ngroups = ngroups;
	v->t0 = t0;
	v->t1 = t1;
	v->w = (t1 - t0) / SVG_COLS > 0 ? (t1 - t0) / SVG_COLS : 1;
	v->col = calloc((size_t)ncpu * SVG_COLS, 1);
	v->open = malloc(sizeof(*v->open) * (size_t)ncpu);
	v->acc = calloc((size_t)ncpu * (size_t)(ngroups + 1), sizeof(*v->acc));
	if (v->col == NULL || v->open == NULL || v->acc == NULL)
		abort();
	for (int c = 0; c < ncpu; c++)
		v->open[c] = -1;
	return (v);
}

/* Column `open' of cpu is complete: keep its dominant group. */
static void
close_col(struct svg *v, int cpu)
{
	int64_t *acc = &v->acc[(size_t)cpu * (size_t)(v->ngroups + 1)];
	int best = 0;

	if (v->open[cpu] < 0)
		return;
	for (int g = 1; g <= v->ngroups; g++)
		if (acc[g] > acc[best])
			best = g;
	v->col[(size_t)cpu * SVG_COLS + (size_t)v->open[cpu]] =
	    (unsigned char)best;
	memset(acc, 0, sizeof(*acc) * (size_t)(v->ngroups + 1));
	v->open[cpu] = -1;
}

void
svg_segment(struct svg *v, int cpu, int group, int64_t a, int64_t b)
{
	int64_t *acc = &v->acc[(size_t)cpu * (size_t)(v->ngroups + 1)];

	if (a < v->t0)
		a = v->t0;
	if (b > v->t1)
		b = v->t1;
	while (a < b) {
		int col = (int)((a - v->t0) / v->w);
		int64_t end;

		if (col >= SVG_COLS)
			break;
		end = v->t0 + (int64_t)(col + 1) * v->w;
		if (end > b)
			end = b;
		if (col != v->open[cpu]) {
			close_col(v, cpu);
			v->open[cpu] = col;
		}
		acc[group < 0 ? 0 : group + 1] += end - a;
		a = end;
	}
}

static const char *palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79",
    "#637939"};
#define NPAL (sizeof(palette) / sizeof(palette[0]))

/* Text for the SVG: XML's special characters escaped. */
static void
put_text(FILE *f, const char *t)
{
	for (; *t != '\0'; t++) {
		switch (*t) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		default:
			fputc(*t, f);
			break;
		}
	}
}

int
svg_write(struct svg *v, const char *path, const struct scenario *sc)
{
	int rowh = v->ncpu <= 16 ? 16 : v->ncpu <= 64 ? 8 : 2;
	int left = 60, top = 40, width = SVG_COLS;
	int height = top + rowh * v->ncpu + 40 + 16 * ((v->ngroups + 3) / 4);
	double secs = (double)(v->t1 - v->t0) / 1e9;
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return (-1);
	for (int c = 0; c < v->ncpu; c++)
		close_col(v, c);
	fprintf(f,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
	    left + width + 20, height);
	fprintf(f,
	    "<text x=\"%d\" y=\"16\" font-size=\"13\">ultsim (simulated): ",
	    left);
	put_text(f, sc->name[0] ? sc->name : sc->file);
	fprintf(f, ", %s, %d CPUs, seed %llu</text>\n",
	    strcmp(sc->policy, "4bsd") == 0 ? "4BSD" : "ULE", v->ncpu,
	    (unsigned long long)sc->seed);
	for (int c = 0; c < v->ncpu; c++) {
		const unsigned char *row = &v->col[(size_t)c * SVG_COLS];
		int y = top + c * rowh;

		if (rowh >= 8)
			fprintf(f,
			    "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">"
			    "cpu %d</text>\n",
			    left - 4, y + rowh - 2, c);
		for (int x = 0; x < SVG_COLS;) {
			int e = x;

			while (e < SVG_COLS && row[e] == row[x])
				e++;
			if (row[x] != 0)
				fprintf(f,
				    "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
				    "height=\"%d\" fill=\"%s\"/>\n",
				    left + x, y, e - x, rowh - (rowh > 2),
				    palette[(row[x] - 1) % NPAL]);
			x = e;
		}
	}
	for (int k = 0; k <= 10; k++) {
		int x = left + k * width / 10, y = top + rowh * v->ncpu;

		fprintf(f,
		    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		    "stroke=\"#999\"/>\n<text x=\"%d\" y=\"%d\" "
		    "text-anchor=\"middle\">%.3g s</text>\n",
		    x, y, x, y + 5, x, y + 17, secs * k / 10.0);
	}
	for (int g = 0; g < v->ngroups; g++) {
		int x = left + (g % 4) * 250,
		    y = top + rowh * v->ncpu + 32 + 16 * (g / 4);

		fprintf(f,
		    "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
		    "fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
		    x, y, palette[g % NPAL], x + 14, y + 9, sc->g[g].name);
	}
	fprintf(f, "</svg>\n");
	return (fclose(f) == 0 ? 0 : -1);
}

void
svg_free(struct svg *v)
{
	if (v == NULL)
		return;
	free(v->col);
	free(v->open);
	free(v->acc);
	free(v);
}
