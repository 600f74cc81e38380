// A host error the C++ compiler finds: `undeclared` names nothing. Expected: the check stops
// with the compiler's message at line 7 of this file.
__global__ void k(int *p) { *p = 1; }

int main() {
  int *p;
  undeclared(&p);
  k<<<1, 1>>>(p);
  return 0;
}
