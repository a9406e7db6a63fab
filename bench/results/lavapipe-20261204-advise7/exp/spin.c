#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){ for(int k=0;k<40;k++){ double t0=now(); volatile double x=1; for(long i=0;i<20000000;i++) x=x*1.0000001+1e-9; printf("%.1f ",(now()-t0)*1e3); fflush(stdout);} printf("\n"); }
