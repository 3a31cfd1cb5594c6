"""The grading service: `python3 -m grader serve`, an HTTP API that takes submissions from
platforms without a GPU (Gradescope, PrairieLearn, GitHub Classroom's hosted runners), queues
them and grades each with `python3 -m grader grade` on this machine's GPUs or through Slurm.

DATA/ (--data, default build/service) holds everything it must not lose:
  service.db                    SQLite (WAL): the tokens (hashed) and the jobs
  service.lock                  one service per DATA at a time (flock)
  jobs/<id>/upload.zip|.tar.gz  the archive as uploaded
  jobs/<id>/unpacked/           what it held, after the checks (grader/service/archive.py)
  jobs/<id>/submission/         its exercise files laid out as chapter folders
  jobs/<id>/report.json, report.html, grade.log
                                what the grader wrote
  workers/<n>/                  a local worker's copy of the submission it grades, and its
                                build folder, reused from one job to the next

The modules: jobs.py (states, a job, the limits), store.py (the database), tokens.py,
archive.py, submissions.py (accepting an upload, what a client reads), grading.py (the grade
command and its outcome), workers.py (local workers), slurm_backend.py, app.py (the Flask
routes; the only module that imports Flask), commands.py (the two subcommands) and client.py
(gradescope-run and prairielearn-run --service URL: a platform's job grading through a
service).
"""
