#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c, char**v){ size_t n=(size_t)512<<20; float *a=malloc(n), *b=malloc(n); memset(a,1,n); memset(b,2,n);
 int reps = c>1?atoi(v[1]):20;
 for(int k=0;k<reps;k++){ double t0=now(); double s=0; size_t m=n/4; for(size_t i=0;i<m;i+=4) s+=a[i]*b[i]+a[i+1]*b[i+1]+a[i+2]*b[i+2]+a[i+3]*b[i+3]; double t=now()-t0; printf("%.2f ", 2.0*n/t/1e9); fflush(stdout); if(s==42) puts("");}
 puts(""); }
