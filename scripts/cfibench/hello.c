#include <stdio.h>
int f(int x) { return x * 3 + 1; }
int main(int argc, char **argv) { printf("%d\n", f(argc)); return 0; }
