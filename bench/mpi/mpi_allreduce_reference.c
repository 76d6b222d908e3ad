/* The peer figures for `cuda-agent bench allreduce` under mpirun: Open MPI's own blocking
 * MPI_Allreduce, and MPI_Reduce + MPI_Bcast (what plugins/mpi/mpi_communicator.cpp issues), timed
 * as the bench times its communicator: per size, the median over 20 iterations (after 5 warm-up
 * ones) of the slowest rank's time, each iteration started after a barrier.
 *   mpicc -O2 bench/mpi/mpi_allreduce_reference.c -o /tmp/mpi_allreduce_reference
 *   mpirun -np 2 /tmp/mpi_allreduce_reference
 *   mpirun -np 2 cuda-agent bench allreduce --device cpu --max-bytes 16777216   (same sizes) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  enum { kWarmup = 5, kIterations = 20 };
  if (rank == 0) printf("%12s %16s %20s\n", "bytes", "MPI_Allreduce", "MPI_Reduce+MPI_Bcast");
  for (long bytes = 4096; bytes <= 16777216; bytes *= 4) {
    const int n = (int)(bytes / 4);
    float* data = malloc((size_t)bytes);
    double median[2];
    for (int mode = 0; mode < 2; ++mode) {
      double slowest[kIterations];
      for (int i = 0; i < kWarmup + kIterations; ++i) {
        for (int k = 0; k < n; ++k) data[k] = (float)(rank + 1);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (mode == 0) {
          MPI_Allreduce(MPI_IN_PLACE, data, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else {
          MPI_Reduce(rank == 0 ? MPI_IN_PLACE : data, data, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
          MPI_Bcast(data, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        }
        double mine = MPI_Wtime() - start, worst;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= kWarmup) slowest[i - kWarmup] = worst;
      }
      qsort(slowest, kIterations, sizeof(double), compare);
      median[mode] = slowest[kIterations / 2];
    }
    if (rank == 0) printf("%12ld %13.1f us %17.1f us\n", bytes, median[0] * 1e6, median[1] * 1e6);
    free(data);
  }
  MPI_Finalize();
  return 0;
}
