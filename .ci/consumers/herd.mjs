/**
 * The check every JavaScript consumer makes: a herd of 100 concurrent fetches of one cold id costs
 * exactly one loader call, and every caller gets that call's answer. Prints a pass line or throws.
 */
export async function assertHerdOfOne(table, consumer) {
  let loads = 0
  const loaded = { by: consumer }
  const answers = await Promise.all(
    Array.from({ length: 100 }, () =>
      table.fetch('cold', async () => {
        loads++
        return loaded
      }),
    ),
  )
  if (loads !== 1) throw new Error(`${consumer}: a herd of 100 concurrent fetches of one cold id cost ${loads} loader calls, not 1`)
  if (!answers.every((answer) => answer === loaded)) throw new Error(`${consumer}: some callers of the herd did not get the one load's answer`)
  console.log(`pass ${consumer}: a herd of 100 concurrent fetches of one cold id cost 1 loader call`)
}
